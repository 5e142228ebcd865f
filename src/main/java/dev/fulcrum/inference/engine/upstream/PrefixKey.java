package dev.fulcrum.inference.engine.upstream;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The key of a request's prompt prefix for prefix affinity: the beginning that the turns of one conversation and the
 * requests of one agent share, cut at a number of characters. A chat's messages up to and including its first user
 * message (the system prompt and the opening question: every later turn repeats them), each as its role and text; a
 * completion's prompt (its first, when several); a response's instructions and its input up to the first user message.
 * Null when the request has none (it is then routed by load alone).
 */
final class PrefixKey {

    private PrefixKey() {
    }

    static String chat(JsonNode messages, int chars) {
        if (messages == null || !messages.isArray() || messages.isEmpty()) {
            return null;
        }
        StringBuilder key = new StringBuilder();
        for (JsonNode message : messages) {
            key.append(message.path("role").asText()).append('\n');
            text(message.get("content"), key, chars);
            key.append('\n');
            if (key.length() >= chars || "user".equals(message.path("role").asText())) {
                break;
            }
        }
        return cut(key, chars);
    }

    static String text(JsonNode prompt, int chars) {
        if (prompt == null || prompt.isNull()) {
            return null;
        }
        JsonNode first = prompt.isArray() && !prompt.isEmpty() && !prompt.get(0).isNumber() ? prompt.get(0) : prompt;
        StringBuilder key = new StringBuilder();
        if (first.isArray()) { // token ids
            for (JsonNode id : first) {
                key.append(id.asText()).append(' ');
                if (key.length() >= chars) {
                    break;
                }
            }
        } else {
            key.append(first.asText());
        }
        return key.isEmpty() ? null : cut(key, chars);
    }

    static String responses(JsonNode instructions, JsonNode input, int chars) {
        StringBuilder key = new StringBuilder();
        if (instructions != null && instructions.isTextual()) {
            key.append("instructions\n").append(instructions.asText()).append('\n');
        }
        if (input != null && input.isTextual()) {
            key.append("user\n").append(input.asText());
        } else if (input != null && input.isArray()) {
            String items = chat(input, chars);
            key.append(items == null ? "" : items);
        }
        return key.isEmpty() ? null : cut(key, chars);
    }

    /** A message's text: a string, or the text of its parts. */
    private static void text(JsonNode content, StringBuilder key, int chars) {
        if (content == null) {
            return;
        }
        if (content.isTextual()) {
            key.append(content.asText(), 0, Math.min(content.asText().length(), Math.max(0, chars - key.length())));
            return;
        }
        for (JsonNode part : content) {
            if (key.length() >= chars) {
                return;
            }
            if (part.path("text").isTextual()) {
                key.append(part.path("text").asText());
            }
        }
    }

    private static String cut(StringBuilder key, int chars) {
        return key.length() > chars ? key.substring(0, chars) : key.toString();
    }
}
