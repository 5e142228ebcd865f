package dev.fulcrum.inference.engine.upstream;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Token counts for upstreams that report no usage: about four characters per token (the rule of thumb of BPE tokenizers
 * on English text), at least one per non-empty text. Only used when the upstream's own count is missing.
 */
final class TokenEstimate {

    private TokenEstimate() {
    }

    static int text(String text) {
        return text == null || text.isEmpty() ? 0 : Math.max(1, (text.length() + 3) / 4);
    }

    static int prompt(JsonNode messages) {
        int tokens = 0;
        for (JsonNode message : messages) {
            JsonNode content = message.path("content");
            if (content.isTextual()) {
                tokens += text(content.asText());
            } else if (content.isArray()) {
                for (JsonNode part : content) {
                    tokens += text(part.path("text").asText(""));
                }
            }
            tokens += 4; // role and separators
        }
        return tokens;
    }

    /** An input of the text completions or embeddings: a string, strings, a token array or token arrays. */
    static int input(JsonNode input) {
        if (input == null || input.isNull()) {
            return 0;
        }
        if (input.isTextual()) {
            return text(input.asText());
        }
        int tokens = 0;
        for (JsonNode item : input) {
            tokens += item.isTextual() ? text(item.asText()) : item.isArray() ? item.size() : 1;
        }
        return tokens;
    }
}
