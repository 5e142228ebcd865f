package dev.fulcrum.inference;

import io.vertx.core.json.JsonArray;

/** JSON string literals, for the few places that edit JSON text without parsing it. */
final class JsonString {

    private JsonString() {
    }

    static String quote(String value) {
        String array = new JsonArray().add(value).encode();
        return array.substring(1, array.length() - 1);
    }
}
