package dev.fulcrum.inference;

import com.fasterxml.jackson.core.io.JsonStringEncoder;

/** JSON string literals, for the few places that edit JSON text without parsing it. */
public final class JsonString {

    private JsonString() {
    }

    /** {@code value} as a JSON string literal, quotes included. */
    public static String quote(String value) {
        return "\"" + new String(JsonStringEncoder.getInstance().quoteAsString(value)) + "\"";
    }
}
