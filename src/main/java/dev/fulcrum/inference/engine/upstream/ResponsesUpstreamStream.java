package dev.fulcrum.inference.engine.upstream;

import java.nio.charset.StandardCharsets;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.Exchange.Outcome;

/**
 * Passes a server's Responses API events to the client as they arrive, one event at a time: {@code model} is replaced
 * by the catalog id, usage is read from the final {@code response.completed} (or {@code incomplete}, {@code failed})
 * event, and the client's backpressure pauses the server. The stream ends as the server's does, with no {@code [DONE]}.
 */
final class ResponsesUpstreamStream extends UpstreamRelay {

    private Buffer pending = Buffer.buffer();
    private int inputTokens;
    private int outputTokens;

    ResponsesUpstreamStream(Exchange exchange, HttpClientResponse upstream, String upstreamModel) {
        super(exchange, upstream, upstreamModel);
    }

    @Override
    void data(Buffer chunk) {
        pending.appendBuffer(chunk);
        String text = pending.toString(StandardCharsets.UTF_8).replace("\r\n", "\n");
        int start = 0;
        int boundary;
        while ((boundary = text.indexOf("\n\n", start)) >= 0) {
            event(text.substring(start, boundary));
            start = boundary + 2;
        }
        pending = Buffer.buffer(text.substring(start));
        if (exchange.response().writeQueueFull()) {
            upstream.pause();
            exchange.response().drainHandler(v -> upstream.resume());
        }
    }

    private void event(String event) {
        if (event.isBlank()) {
            return;
        }
        if (event.contains("response.output_text.delta")) {
            exchange.firstToken();
        }
        if (event.contains("\"response.completed\"") || event.contains("\"response.incomplete\"")
                || event.contains("\"response.failed\"")) {
            for (String line : event.split("\n")) {
                if (line.startsWith("data:")) {
                    try {
                        JsonObject usage = new JsonObject(line.substring(5).strip())
                                .getJsonObject("response", new JsonObject()).getJsonObject("usage");
                        if (usage != null) {
                            inputTokens = usage.getInteger("input_tokens", 0);
                            outputTokens = usage.getInteger("output_tokens", 0);
                        }
                    } catch (RuntimeException e) {
                        // not JSON: passed on as it is, without usage
                    }
                }
            }
        }
        exchange.passThrough(withCatalogModel(event));
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
        exchange.endStream();
        exchange.finish(new Outcome(200, inputTokens, outputTokens));
    }
}
