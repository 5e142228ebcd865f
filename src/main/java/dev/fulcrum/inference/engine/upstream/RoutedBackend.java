package dev.fulcrum.inference.engine.upstream;

import java.util.function.BiConsumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.ChatExchange;
import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.EmbeddingBackend;
import dev.fulcrum.inference.EmbeddingExchange;
import dev.fulcrum.inference.EmbeddingRequest;
import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.Exchange.Outcome;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.InferenceFailure.ServerFault;
import dev.fulcrum.inference.ResponsesBackend;
import dev.fulcrum.inference.ResponsesExchange;
import dev.fulcrum.inference.TextCompletionBackend;
import dev.fulcrum.inference.TextCompletionExchange;
import dev.fulcrum.inference.TextCompletionRequest;
import dev.fulcrum.inference.TokenSampler;
import dev.fulcrum.inference.catalog.CatalogModel;
import dev.fulcrum.inference.catalog.CheckpointExports;

/**
 * A catalog model (or a trained checkpoint's adapter) of an {@code openai-compatible} server with its replicas: each
 * request goes to the replica {@link Replicas} chooses, and is sent to another one (at most
 * {@code fulcrum.inference.routing.retries} times, within the model's timeout) when the replica failed before any byte
 * of the answer went to the client: no connection, a connection reset or closed, its connections all taken, 502, 503,
 * 504 or 429. A replica that answers 404 for an adapter it had loaded has restarted: the adapter is loaded on it again
 * and the request sent again. When no replica is left, the failure goes to whoever rescues the exchange next (the
 * gateway's fallback models). Token-level samples (the Tinker API's) go to the server's vLLM completions
 * ({@link UpstreamTokens}).
 */
final class RoutedBackend implements Backend, TextCompletionBackend, EmbeddingBackend, ResponsesBackend, TokenSampler {

    private final Replicas replicas;
    private final ObjectMapper json;
    private final AdapterLoader loader;
    private final RoutingMetrics metrics;
    private final String upstreamModel;
    private final CheckpointExports.Export adapter;
    private final Integer maxTokens;
    private final int retries;
    private final int prefixChars;
    private final Runnable onClose;
    /** Whether requests have a prefix key (the model routes by prefix affinity). */
    private final boolean affine;
    private final UpstreamTokens tokens;

    /**
     * The model {@code upstreamModel} of the replicas' server; {@code adapter}: the LoRA adapter it is (null for the
     * server's own model); {@code maxTokens}: the largest max_tokens a request may ask for, or null; {@code onClose}:
     * what closing it does (the catalog model's own backend closes the replicas).
     */
    RoutedBackend(Replicas replicas, ObjectMapper json, AdapterLoader loader, RoutingMetrics metrics,
            String upstreamModel, CheckpointExports.Export adapter, Integer maxTokens, int retries, int prefixChars,
            Runnable onClose) {
        this.replicas = replicas;
        this.json = json;
        this.loader = loader;
        this.metrics = metrics;
        this.upstreamModel = upstreamModel;
        this.adapter = adapter;
        this.maxTokens = maxTokens;
        this.retries = retries;
        this.prefixChars = prefixChars;
        this.onClose = onClose;
        this.affine = CatalogModel.PREFIX_AFFINITY.equals(replicas.model().routing());
        this.tokens = new UpstreamTokens(replicas, json, loader, metrics, upstreamModel, adapter, maxTokens, retries,
                prefixChars);
    }

    /** Blocking: runs on the caller's thread (never the event loop). */
    @Override
    public Sampled sampleTokens(Asked asked) {
        return tokens.sample(asked, replicas.modelId());
    }

    @Override
    public void close() {
        onClose.run();
    }

    private OpenAiCompatibleBackend on(Replica replica) {
        return replica.backend(upstreamModel, name -> new OpenAiCompatibleBackend(json, replica.server, name));
    }

    @Override
    public void check(ChatRequest request, String modelId) {
        // everything is passed through; the upstream refuses what it cannot do, and its 400 reaches the client
        Integer asked = request.maxTokens();
        if (maxTokens != null && asked != null && asked > maxTokens) {
            throw InferenceFailure.maxTokensTooLarge(request.maxTokensParam(), asked, maxTokens, modelId);
        }
    }

    @Override
    public void complete(ChatExchange exchange) {
        ChatRequest request = exchange.request();
        new Routed<>(exchange, affine ? PrefixKey.chat(request.messages(), prefixChars) : null,
                OpenAiCompatibleBackend::complete).start();
    }

    @Override
    public void check(TextCompletionRequest request, String modelId) {
        Integer asked = request.maxTokens();
        if (maxTokens != null && asked != null && asked > maxTokens) {
            throw InferenceFailure.maxTokensTooLarge("max_tokens", asked, maxTokens, modelId);
        }
    }

    @Override
    public void complete(TextCompletionExchange exchange) {
        new Routed<>(exchange, affine ? PrefixKey.text(exchange.request().body().get("prompt"), prefixChars) : null,
                OpenAiCompatibleBackend::complete).start();
    }

    @Override
    public void check(EmbeddingRequest request, String modelId) {
        // everything is passed through (token arrays and dimensions included); the upstream refuses what it cannot do
    }

    @Override
    public void embed(EmbeddingExchange exchange) {
        new Routed<>(exchange, null, OpenAiCompatibleBackend::embed).start();
    }

    /** Whether {@code /v1/responses} should be tried first: some replica is not known to lack it. */
    @Override
    public boolean mayHaveResponsesApi() {
        for (Replica replica : replicas.all()) {
            if (!replica.server.noResponsesApi) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void respond(ResponsesExchange exchange, Runnable orElse) {
        JsonNode body = exchange.responsesRequest().body();
        String key = affine ? PrefixKey.responses(body.get("instructions"), body.get("input"), prefixChars) : null;
        Routed<ResponsesExchange> routed = new Routed<>(exchange, key, null);
        routed.send = (backend, responses) -> backend.respond(responses, routed.instead(orElse));
        routed.start();
    }

    /** One request's way over the replicas: its attempts, and the rescue of a failed one. */
    private final class Routed<E extends Exchange> implements Exchange.Rescue {

        private final E exchange;
        private final String key;
        private BiConsumer<OpenAiCompatibleBackend, E> send;
        private final Context context;
        private final Attempts attempts;
        private Exchange.Rescue outer;
        private Replica current;
        private long attemptStarted;
        private boolean open;

        Routed(E exchange, String key, BiConsumer<OpenAiCompatibleBackend, E> send) {
            this.exchange = exchange;
            this.key = key;
            this.send = send;
            this.context = Vertx.currentContext();
            this.attempts = new Attempts(replicas, key, adapter == null ? null : adapter.name(),
                    !exchange.model().fallbacks().isEmpty(), retries);
        }

        void start() {
            outer = exchange.rescueWith(this);
            exchange.whenFinished(outcome -> {
                if (open) {
                    close(outcome.status(), null);
                }
            });
            attempt(attempts.first());
        }

        /** The server had no Responses API: the bridge answers instead, as a new request over the replicas. */
        Runnable instead(Runnable orElse) {
            return () -> {
                close(200, null);
                exchange.rescueWith(outer);
                orElse.run();
            };
        }

        private void attempt(Replica replica) {
            if (replica == null) {
                exchange.rescueWith(outer);
                InferenceFailure none = InferenceFailure.noReplica(replicas.modelId());
                exchange.fail(none);
                exchange.finish(new Outcome(none.status(), 0, 0));
                return;
            }
            current = replica;
            open = true;
            attemptStarted = System.nanoTime();
            replica.begin();
            exchange.rescueWith(this);
            if (adapter == null) {
                send.accept(on(replica), exchange);
                return;
            }
            loader.ensure(replicas.modelId(), replica, adapter, exchange.model().id()).whenComplete((ok, failure) -> {
                Runnable next = failure == null ? () -> send.accept(on(replica), exchange) : () -> {
                    InferenceFailure failed = failure instanceof InferenceFailure known ? known
                            : UpstreamErrors.translate(exchange.model().id(), failure, "loading the adapter failed");
                    exchange.fail(failed);
                    exchange.finish(new Outcome(failed.status(), 0, 0));
                };
                if (Vertx.currentContext() == context) {
                    next.run();
                } else {
                    context.runOnContext(v -> next.run());
                }
            });
        }

        @Override
        public boolean take(InferenceFailure failure) {
            Replica failed = current;
            ServerFault fault = failure.fault();
            close(failure.status(), fault);
            if (fault == null || exchange.cancelled()) {
                return outer != null && outer.take(failure);
            }
            Attempts.Next next = attempts.after(failed, fault);
            if (next == null) {
                return outer != null && outer.take(failure);
            }
            if (next.reload()) {
                // the replica restarted and lost its adapters: load it there again, and send the request again
                Span.current().addEvent("fulcrum.adapter.reload",
                        Attributes.builder().put("fulcrum.replica", failed.name).build());
            } else {
                metrics.retried(replicas.modelId(), failed);
                Span.current().addEvent("fulcrum.retry",
                        Attributes.builder().put("fulcrum.replica", failed.name)
                                .put("fulcrum.next_replica", next.replica().name)
                                .put("fulcrum.failure", outcome(failure.status(), fault)).build());
            }
            context.runOnContext(v -> attempt(next.replica()));
            return true;
        }

        /** Ends the attempt on the current replica: its load, its latency, its health and the metrics. */
        private void close(int status, ServerFault fault) {
            if (!open) {
                return;
            }
            open = false;
            long end = exchange.stream() && exchange.firstTokenAt() > attemptStarted ? exchange.firstTokenAt()
                    : System.nanoTime();
            boolean answered = fault == null ? status != 499 : fault.reason() == ServerFault.Reason.ANSWERED;
            boolean failing = fault != null ? fault.failing() : status >= 500;
            String outcome = outcome(status, fault);
            replicas.ended(current, end - attemptStarted, answered, failing, outcome);
            metrics.attempt(replicas.modelId(), current, outcome);
        }
    }

    /** An attempt's outcome as the metrics and the admin API name it. */
    static String outcome(int status, ServerFault fault) {
        if (fault != null && fault.reason() != ServerFault.Reason.ANSWERED) {
            return fault.reason().name().toLowerCase(java.util.Locale.ROOT);
        }
        if (status == 499) {
            return "cancelled";
        }
        if (status == 429) {
            return "rate_limited";
        }
        return status >= 500 ? "server_error" : status >= 400 ? "rejected" : "ok";
    }
}
