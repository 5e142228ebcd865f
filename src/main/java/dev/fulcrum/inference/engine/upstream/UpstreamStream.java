package dev.fulcrum.inference.engine.upstream;

import java.nio.charset.StandardCharsets;
import java.util.function.IntSupplier;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.ChatExchange;
import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.Exchange.Outcome;

/**
 * Passes an upstream's Server-Sent Events to the client as they arrive, one event at a time (never the whole answer):
 * {@code model} is replaced by the catalog id, the upstream's usage chunk is kept for the usage record (and dropped
 * unless the client asked for {@code include_usage}), and the client's backpressure pauses the upstream.
 */
final class UpstreamStream extends UpstreamRelay {

    private final HttpServerResponse client;
    private final boolean includeUsage;
    private final IntSupplier promptEstimate;
    private final String chunkObject;
    private final String contentMarker;
    private Buffer pending = Buffer.buffer();
    private int scanFrom;
    private String id;
    private long created;
    private int promptTokens = -1;
    private int completionTokens;
    private int contentEvents;

    /** A chat completion's stream. */
    UpstreamStream(ChatExchange exchange, HttpClientResponse upstream, String upstreamModel) {
        this(exchange, upstream, upstreamModel, exchange.request().includeUsage(),
                () -> TokenEstimate.prompt(exchange.request().messages()), "chat.completion.chunk", "\"content\":\"");
    }

    /**
     * A stream of {@code chunkObject} chunks whose content is the string field {@code contentMarker} opens (e.g.
     * {@code "text":"}); {@code promptEstimate}: counts the prompt's tokens when the upstream reports no usage.
     */
    UpstreamStream(Exchange exchange, HttpClientResponse upstream, String upstreamModel, boolean includeUsage,
            IntSupplier promptEstimate, String chunkObject, String contentMarker) {
        super(exchange, upstream, upstreamModel);
        this.includeUsage = includeUsage;
        this.promptEstimate = promptEstimate;
        this.chunkObject = chunkObject;
        this.contentMarker = contentMarker;
        this.client = exchange.response();
    }

    @Override
    void data(Buffer chunk) {
        pending.appendBuffer(chunk);
        int start = 0;
        int length = pending.length();
        for (int i = Math.max(scanFrom, 0); i < length; i++) {
            if (pending.getByte(i) != '\n') {
                continue;
            }
            int end = -1;
            if (i + 1 < length && pending.getByte(i + 1) == '\n') {
                end = i + 2;
            } else if (i + 2 < length && pending.getByte(i + 1) == '\r' && pending.getByte(i + 2) == '\n') {
                end = i + 3;
            }
            if (end > 0) {
                int stop = i > start && pending.getByte(i - 1) == '\r' ? i - 1 : i;
                event(pending.getString(start, stop, StandardCharsets.UTF_8.name()));
                start = end;
                i = end - 1;
            }
        }
        if (start > 0) {
            pending = pending.getBuffer(start, length);
        }
        scanFrom = Math.max(0, pending.length() - 2);
        if (client.writeQueueFull()) {
            upstream.pause();
            client.drainHandler(v -> upstream.resume());
        }
    }

    private void event(String event) {
        if (!event.startsWith("data:")) {
            if (!event.isBlank()) {
                write(event);
            }
            return;
        }
        String data = event.substring(5).strip();
        if (data.equals("[DONE]")) {
            return;
        }
        if (id == null) {
            try {
                JsonObject first = new JsonObject(data);
                id = first.getString("id");
                created = first.getLong("created", 0L);
            } catch (RuntimeException e) {
                id = "";
            }
        }
        if (data.contains("\"usage\"")) {
            JsonObject chunk;
            try {
                chunk = new JsonObject(data);
            } catch (RuntimeException e) {
                chunk = null;
            }
            JsonObject usage = chunk == null ? null : chunk.getJsonObject("usage");
            if (usage != null) {
                promptTokens = usage.getInteger("prompt_tokens", 0);
                completionTokens = usage.getInteger("completion_tokens", 0);
                JsonArray choices = chunk.getJsonArray("choices");
                if ((choices == null || choices.isEmpty()) && !includeUsage) {
                    return;
                }
            }
        }
        if (data.contains(contentMarker) && !data.contains(contentMarker + "\"")) {
            if (contentEvents++ == 0) {
                exchange.firstToken();
            }
        }
        write("data: " + withCatalogModel(data));
    }

    private void write(String event) {
        exchange.passThrough(event);
    }

    @Override
    void end() {
        if (ended) {
            return;
        }
        ended = true;
        if (pending.length() > 0) {
            event(pending.toString(StandardCharsets.UTF_8).strip());
        }
        if (promptTokens < 0) {
            promptTokens = promptEstimate.getAsInt();
            completionTokens = contentEvents;
            if (includeUsage) {
                JsonObject usage = new JsonObject().put("prompt_tokens", promptTokens)
                        .put("completion_tokens", completionTokens)
                        .put("total_tokens", promptTokens + completionTokens);
                write("data: " + new JsonObject().put("id", id == null ? "" : id).put("object", chunkObject)
                        .put("created", created).put("model", exchange.model().id()).put("choices", new JsonArray())
                        .put("usage", usage).encode());
            }
        }
        exchange.done();
        exchange.finish(new Outcome(200, promptTokens, completionTokens));
    }
}
