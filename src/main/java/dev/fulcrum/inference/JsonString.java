package dev.fulcrum.inference;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

/** JSON string literals, for the few places that edit JSON text without parsing it. */
final class JsonString {

    private JsonString() {
    }

    /** {@code value} as a JSON string literal, quotes included. */
    static String quote(String value) {
        return "\"" + new String(JsonStringEncoder.getInstance().quoteAsString(value)) + "\"";
    }
}
