package dev.fulcrum.console;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

import io.quarkus.qute.TemplateExtension;

/** What the data screens' templates need beyond Qute's own: a value as a URL query parameter. */
@TemplateExtension
final class DataTemplateExtensions {

    private DataTemplateExtensions() {
    }

    static String queryEncoded(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
