package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;

import dev.fulcrum.inference.engine.format.ChatFormat.Call;

/**
 * Calls written as JSON objects ({@code {"name": ..., "arguments": {...}}} under each family's keys), one or an array
 * of them, read as far as they were written: a call's arguments are its JSON as the model wrote it, growing as it is
 * generated (arguments written as a string holding JSON come when the string ends).
 */
final class JsonCalls {

    /**
     * The keys of a family's call objects: the function's name, its arguments (the first as the family writes them, the
     * others as read too), the call's id if any, and whether the id comes first.
     */
    record Keys(String name, List<String> arguments, String id, boolean idFirst) {

        static final Keys OPENAI = new Keys("name", List.of("arguments", "parameters"), null, false);
    }

    /** A call read and where its object ends ({@link JsonScan#OPEN} when it has not). */
    record Read(Call call, int end) {
    }

    private JsonCalls() {
    }

    /** The call whose object starts at {@code at} (after any blank), or null when it is not a call's JSON. */
    static Read object(String text, int at, Keys keys) {
        JsonScan.ObjectSoFar object = JsonScan.object(text, at);
        if (object == null) {
            return null;
        }
        String name = null;
        JsonScan.Field nameField = object.field(keys.name());
        if (nameField != null && nameField.end() >= 0) {
            name = JsonScan.decode(text.substring(nameField.start(), nameField.end()));
            if (name == null) {
                return null;
            }
        }
        String arguments = "";
        for (String key : keys.arguments()) {
            JsonScan.Field field = object.field(key);
            if (field != null) {
                arguments = arguments(text, field.start(), field.end());
                if (arguments == null) {
                    return null;
                }
                break;
            }
        }
        String id = null;
        JsonScan.Field idField = keys.id() == null ? null : object.field(keys.id());
        if (idField != null && idField.end() >= 0) {
            id = JsonScan.decode(text.substring(idField.start(), idField.end()));
        }
        if (object.closed() && name == null) {
            return null;
        }
        return new Read(new Call(name, arguments, id, object.closed()), object.end());
    }

    /** Arguments' JSON from {@code start} to {@code end} (or the text's end): as written, or a string's content. */
    static String arguments(String text, int start, int end) {
        if (text.charAt(start) == '"') {
            return end < 0 ? "" : JsonScan.decode(text.substring(start, end));
        }
        return text.substring(start, end < 0 ? text.length() : end).stripTrailing();
    }

    /**
     * The calls of the array starting at {@code at} (after any blank), as far as written; with the index after the
     * array's {@code ]}, {@link JsonScan#OPEN} while it is not closed, or {@link JsonScan#BROKEN}.
     */
    static int array(String text, int at, Keys keys, List<Call> calls) {
        int i = JsonScan.skipSpace(text, at);
        if (i >= text.length()) {
            return JsonScan.OPEN;
        }
        if (text.charAt(i) != '[') {
            return JsonScan.BROKEN;
        }
        i = JsonScan.skipSpace(text, i + 1);
        List<Call> read = new ArrayList<>();
        try {
            if (i < text.length() && text.charAt(i) == ']') {
                return i + 1;
            }
            while (i < text.length()) {
                Read call = object(text, i, keys);
                if (call == null) {
                    return JsonScan.BROKEN;
                }
                read.add(call.call());
                if (call.end() < 0) {
                    return JsonScan.OPEN;
                }
                i = JsonScan.skipSpace(text, call.end());
                if (i >= text.length()) {
                    return JsonScan.OPEN;
                }
                if (text.charAt(i) == ']') {
                    return i + 1;
                }
                if (text.charAt(i) != ',') {
                    return JsonScan.BROKEN;
                }
                i = JsonScan.skipSpace(text, i + 1);
            }
            return JsonScan.OPEN;
        } finally {
            calls.addAll(read);
        }
    }
}
