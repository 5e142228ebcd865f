package dev.fulcrum.inference;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.llama.Generation;
import dev.fulcrum.inference.engine.llama.LlamaModel;

/**
 * The log probabilities of a GGUF model's answer in OpenAI's two shapes: chat's {@code {"content": [{"token",
 * "logprob", "bytes", "top_logprobs"}]}} and text completions' {@code {"tokens", "token_logprobs", "top_logprobs",
 * "text_offset"}}. A token's text is its bytes read as UTF-8 (a token holding part of a character reads as U+FFFD; its
 * {@code bytes} are exact). The probabilities are the model's own (a log-softmax of its logits, before temperature,
 * top-p and grammar), as llama-server and vLLM report them by default.
 */
final class GgufLogprobs {

    private final LlamaModel model;
    private final List<Generation.Token> tokens = new ArrayList<>();
    private int taken;

    GgufLogprobs(LlamaModel model) {
        this.model = model;
    }

    void add(Generation.Token token) {
        tokens.add(token);
    }

    /** The tokens added since the last call, in chat's shape (for one streamed chunk). */
    JsonObject takeChat() {
        JsonObject content = chat(tokens.subList(taken, tokens.size()));
        taken = tokens.size();
        return content;
    }

    /** Every token, in chat's shape. */
    JsonObject chat() {
        return chat(tokens);
    }

    private JsonObject chat(List<Generation.Token> list) {
        JsonArray content = new JsonArray();
        for (Generation.Token token : list) {
            JsonArray top = new JsonArray();
            for (int i = 0; i < token.topIds().length; i++) {
                top.add(entry(model.piece(token.topIds()[i]), token.topLogprobs()[i]));
            }
            content.add(entry(token.piece(), token.logprob()).put("top_logprobs", top));
        }
        return new JsonObject().put("content", content);
    }

    private static JsonObject entry(byte[] piece, float logprob) {
        JsonArray bytes = new JsonArray();
        for (byte b : piece) {
            bytes.add(b & 0xff);
        }
        return new JsonObject().put("token", new String(piece, StandardCharsets.UTF_8)).put("logprob", (double) logprob)
                .put("bytes", bytes);
    }

    /**
     * The tokens added since the last call in text completions' shape, their offsets counted from {@code offset}
     * characters (the choice's text before them).
     */
    JsonObject takeText(int offset) {
        JsonObject text = text(tokens.subList(taken, tokens.size()), offset);
        taken = tokens.size();
        return text;
    }

    /** Every token in text completions' shape, offsets from {@code offset} (the echoed prompt's length, or 0). */
    JsonObject text(int offset) {
        return text(tokens, offset);
    }

    private JsonObject text(List<Generation.Token> list, int offset) {
        JsonArray texts = new JsonArray();
        JsonArray logprobs = new JsonArray();
        JsonArray tops = new JsonArray();
        JsonArray offsets = new JsonArray();
        int at = offset;
        for (Generation.Token token : list) {
            String text = new String(token.piece(), StandardCharsets.UTF_8);
            texts.add(text);
            logprobs.add((double) token.logprob());
            JsonObject top = new JsonObject();
            for (int i = 0; i < token.topIds().length; i++) {
                top.put(new String(model.piece(token.topIds()[i]), StandardCharsets.UTF_8),
                        (double) token.topLogprobs()[i]);
            }
            tops.add(top);
            offsets.add(at);
            at += text.length();
        }
        return new JsonObject().put("tokens", texts).put("token_logprobs", logprobs).put("top_logprobs", tops)
                .put("text_offset", offsets);
    }
}
