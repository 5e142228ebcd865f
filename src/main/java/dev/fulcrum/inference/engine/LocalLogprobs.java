package dev.fulcrum.inference.engine;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The log probabilities of a local engine's answer in OpenAI's two shapes: chat's {@code {"content": [{"token",
 * "logprob", "bytes", "top_logprobs"}], "refusal": null}} and text completions' {@code {"tokens", "token_logprobs",
 * "top_logprobs", "text_offset"}}. A token's text is its bytes read as UTF-8 (a token holding part of a character reads
 * as U+FFFD; its {@code bytes} are exact). The engines give the model's own probabilities (a log-softmax of its logits,
 * before temperature, top-p and grammar), as llama-server and vLLM report them by default.
 */
public final class LocalLogprobs {

    private final List<LoggedToken> tokens = new ArrayList<>();
    private int taken;

    public void add(LoggedToken token) {
        tokens.add(token);
    }

    /** The tokens added since the last call, in chat's shape (for one streamed chunk). */
    public JsonObject takeChat() {
        JsonObject content = chat(tokens.subList(taken, tokens.size()));
        taken = tokens.size();
        return content;
    }

    /** Every token, in chat's shape. */
    public JsonObject chat() {
        return chat(tokens);
    }

    private JsonObject chat(List<LoggedToken> list) {
        JsonArray content = new JsonArray();
        for (LoggedToken token : list) {
            JsonArray top = new JsonArray();
            for (LoggedToken alternative : token.top()) {
                top.add(entry(alternative.bytes(), alternative.logprob()));
            }
            content.add(entry(token.bytes(), token.logprob()).put("top_logprobs", top));
        }
        // a local model never refuses in OpenAI's sense (a refusal is the hosted models' own channel)
        return new JsonObject().put("content", content).putNull("refusal");
    }

    private static JsonObject entry(byte[] piece, double logprob) {
        JsonArray bytes = new JsonArray();
        for (byte b : piece) {
            bytes.add(b & 0xff);
        }
        return new JsonObject().put("token", new String(piece, StandardCharsets.UTF_8)).put("logprob", logprob)
                .put("bytes", bytes);
    }

    /**
     * The tokens added since the last call in text completions' shape, their offsets counted from {@code offset}
     * characters (the choice's text before them).
     */
    public JsonObject takeText(int offset) {
        JsonObject text = text(tokens.subList(taken, tokens.size()), offset);
        taken = tokens.size();
        return text;
    }

    /** Every token in text completions' shape, offsets from {@code offset} (the echoed prompt's length, or 0). */
    public JsonObject text(int offset) {
        return text(tokens, offset);
    }

    private JsonObject text(List<LoggedToken> list, int offset) {
        JsonArray texts = new JsonArray();
        JsonArray logprobs = new JsonArray();
        JsonArray tops = new JsonArray();
        JsonArray offsets = new JsonArray();
        int at = offset;
        for (LoggedToken token : list) {
            String text = new String(token.bytes(), StandardCharsets.UTF_8);
            texts.add(text);
            offsets.add(at);
            at += text.length();
            if (Double.isNaN(token.logprob())) { // a scored prompt's first token: nothing came before it
                logprobs.addNull();
                tops.addNull();
                continue;
            }
            logprobs.add(token.logprob());
            JsonObject top = new JsonObject();
            for (LoggedToken alternative : token.top()) {
                top.put(new String(alternative.bytes(), StandardCharsets.UTF_8), alternative.logprob());
            }
            tops.add(top);
        }
        return new JsonObject().put("tokens", texts).put("token_logprobs", logprobs).put("top_logprobs", tops)
                .put("text_offset", offsets);
    }

    /** Two runs of tokens in text completions' shape as one (a scored prompt's, then its continuation's). */
    public static JsonObject joined(JsonObject first, JsonObject then) {
        JsonObject joined = new JsonObject();
        for (String field : first.fieldNames()) {
            joined.put(field, first.getJsonArray(field).copy().addAll(then.getJsonArray(field)));
        }
        return joined;
    }
}
