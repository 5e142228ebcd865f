package dev.fulcrum.inference.engine.upstream;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientResponse;

import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.JsonString;

/**
 * What the relays of a model server's event stream share ({@link UpstreamStream} for chat and text completions,
 * {@link ResponsesUpstreamStream} for the Responses API): the client's stream is opened, the server's chunks are handed
 * to {@link #data} and its end to {@link #end}, an error ends the exchange once, and the server's model name is
 * replaced by the catalog id.
 */
abstract class UpstreamRelay {

    final Exchange exchange;
    final HttpClientResponse upstream;
    private final String upstreamModelField;
    private final String upstreamModelFieldSpaced;
    private final String modelField;
    private final boolean rewriteModel;
    /** Set once the exchange has been ended, by the server's end or its error. */
    boolean ended;

    UpstreamRelay(Exchange exchange, HttpClientResponse upstream, String upstreamModel) {
        this.exchange = exchange;
        this.upstream = upstream;
        this.upstreamModelField = "\"model\":" + JsonString.quote(upstreamModel);
        this.upstreamModelFieldSpaced = "\"model\": " + JsonString.quote(upstreamModel);
        this.modelField = "\"model\":" + JsonString.quote(exchange.model().id());
        this.rewriteModel = !upstreamModel.equals(exchange.model().id());
    }

    void start() {
        exchange.startStream();
        upstream.handler(this::data);
        upstream.exceptionHandler(e -> {
            if (!ended) {
                ended = true;
                UpstreamErrors.fail(exchange, e);
            }
        });
        upstream.endHandler(v -> end());
    }

    /** A chunk of the server's stream, as it arrived. */
    abstract void data(Buffer chunk);

    /** The server's stream ended. */
    abstract void end();

    /** {@code text} with the server's name of the model replaced by the catalog id. */
    String withCatalogModel(String text) {
        return rewriteModel ? text.replace(upstreamModelField, modelField).replace(upstreamModelFieldSpaced, modelField)
                : text;
    }
}
