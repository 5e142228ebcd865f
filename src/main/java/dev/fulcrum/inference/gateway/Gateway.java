package dev.fulcrum.inference.gateway;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.Exchange.Outcome;
import dev.fulcrum.inference.InferenceCaller;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.OpenAiErrors;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.UsageMeter;
import dev.fulcrum.inference.catalog.InferenceModels;
import dev.fulcrum.inference.gateway.UsageRecorder.Usage;
import dev.fulcrum.platform.Drain;
import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.ShutdownSettings;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Kind;
import dev.fulcrum.platform.errors.StorageFull;
import dev.fulcrum.platform.http.HttpRequestMetrics;

/**
 * The path every OpenAI request of the gateway takes ({@link Endpoint}: chat and text completions, embeddings,
 * responses), so that keys, projects, quotas, limits, usage and metrics are decided once. Nothing on the way blocks the
 * event loop (keys, memberships, quotas and concurrency slots come from memory or from a worker thread; see the classes
 * for what is shared between replicas). The order: body size, key and project, body, model, the backend's own checks,
 * quota, concurrency, then the backend.
 * <p>
 * While the replica drains ({@link Drain}) new requests are refused with 503 and {@code Retry-After}; requests under
 * way may finish within {@code fulcrum.shutdown.stream-grace}, and those still running then end with a 503 error (an
 * error event and the end of the stream once it has begun).
 */
@Singleton
public class Gateway {

    private static final Logger LOG = Logger.getLogger(Gateway.class);

    @Inject
    InferenceCallers callers;

    @Inject
    InferenceModels models;

    @Inject
    ConcurrencyLimits limits;

    @Inject
    TokenQuotas quotas;

    @Inject
    UsageRecorder usage;

    @Inject
    FulcrumConfig fulcrum;

    @Inject
    InferenceMetrics metrics;

    @Inject
    Drain drain;

    @Inject
    ShutdownSettings shutdown;

    @Inject
    Vertx vertx;

    /** The requests under way on this replica. */
    private final Set<Exchange> underWay = ConcurrentHashMap.newKeySet();

    /** Gives the requests under way their grace, then ends those still running. */
    void drain(@Observes Drain.Started started) {
        long remaining = TimeUnit.NANOSECONDS.toMillis(drain.deadline(shutdown.streamGrace()) - System.nanoTime());
        if (underWay.isEmpty()) {
            return;
        }
        LOG.infof("Draining: %d inference requests under way get up to %d ms", underWay.size(), Math.max(0, remaining));
        if (remaining <= 0) {
            interruptUnderWay();
        } else {
            vertx.setTimer(remaining, id -> interruptUnderWay());
        }
    }

    private void interruptUnderWay() {
        for (Exchange exchange : underWay) {
            LOG.warnf("Draining: a request for %s was still running after the grace; it ends with a 503",
                    exchange.model().id());
            exchange.interrupt(InferenceFailure.cutShortByShutdown());
        }
    }

    /** An API key's request: admitted, then answered for the caller its key and project header resolve to. */
    <R, E extends Exchange> void handle(RoutingContext context, Endpoint<R, E> endpoint) {
        long started = System.nanoTime();
        HttpRequestMetrics.template(context, endpoint.path());
        if (!admit(context)) {
            return;
        }
        HttpServerRequest request = context.request();
        serve(context, endpoint, callers.resolve(request.getHeader("Authorization"), project(request)), started);
    }

    /**
     * The header naming the project a request is counted for: {@code Compat-Project}, else {@code OpenAI-Project}; null
     * when neither has a value.
     */
    static InferenceCallers.ProjectHeader project(HttpServerRequest request) {
        for (String name : List.of("Compat-Project", "OpenAI-Project")) {
            String value = request.getHeader(name);
            if (value != null && !value.isBlank()) {
                return new InferenceCallers.ProjectHeader(name, value);
            }
        }
        return null;
    }

    /** The checks before anyone is asked who calls: the replica is not draining and the body has an allowed size. */
    boolean admit(RoutingContext context) {
        if (drain.draining()) {
            OpenAiErrors.write(context.response(), InferenceFailure.shuttingDown());
            return false;
        }
        long max = fulcrum.maxJsonRequestBytes();
        String length = context.request().getHeader("Content-Length");
        try {
            if (length == null || Long.parseLong(length.strip()) > max) {
                OpenAiErrors.write(context.response(), InferenceFailure.tooLarge(max));
                return false;
            }
        } catch (NumberFormatException e) {
            OpenAiErrors.write(context.response(), InferenceFailure.invalid(null, "Invalid Content-Length"));
            return false;
        }
        return true;
    }

    /**
     * The answer to an admitted request for the caller it resolves to (an API key's, or a console session's in
     * {@link ConsoleCompletions}): the body checks, model, quota, concurrency, backend and usage accounting.
     */
    <R, E extends Exchange> void serve(RoutingContext context, Endpoint<R, E> endpoint, Future<InferenceCaller> caller,
            long started) {
        HttpServerRequest request = context.request();
        request.body().onComplete(body -> {
            if (body.failed()) {
                return; // the client went away while sending
            }
            caller.onComplete(known -> {
                if (known.failed()) {
                    fail(context, known.cause());
                } else {
                    accept(context, endpoint, known.result(), body.result(), started);
                }
            });
        });
        request.resume(); // Quarkus hands requests over paused
    }

    private <R, E extends Exchange> void accept(RoutingContext context, Endpoint<R, E> endpoint, InferenceCaller caller,
            Buffer body, long started) {
        R request;
        try {
            request = endpoint.parse(body.getBytes());
        } catch (InferenceFailure failure) {
            fail(context, failure);
            return;
        }
        String modelId = endpoint.model(request);
        Future.fromCompletionStage(models.find(modelId, caller), context.vertx().getOrCreateContext())
                .onComplete(found -> {
                    if (found.failed()) {
                        fail(context, found.cause());
                        return;
                    }
                    Optional<ServedModel> model = found.result();
                    if (model.isEmpty()) {
                        fail(context, InferenceFailure.modelNotFound(modelId));
                        return;
                    }
                    try {
                        endpoint.check(model.get().backend(), request, model.get().id());
                    } catch (InferenceFailure failure) {
                        fail(context, failure);
                        return;
                    }
                    quotas.check(caller.entity()).onComplete(allowed -> {
                        if (allowed.failed()) {
                            refuse(context, caller, model.get(), started, allowed.cause());
                        } else {
                            start(context, endpoint, caller, request, model.get(), started);
                        }
                    });
                });
    }

    private <R, E extends Exchange> void start(RoutingContext context, Endpoint<R, E> endpoint, InferenceCaller caller,
            R request, ServedModel model, long started) {
        limits.acquire(caller.entity(), caller.project()).onComplete(slot -> {
            if (slot.failed()) {
                refuse(context, caller, model, started, slot.cause());
            } else {
                run(context, endpoint, caller, request, model, started);
            }
        });
    }

    private <R, E extends Exchange> void run(RoutingContext context, Endpoint<R, E> endpoint, InferenceCaller caller,
            R request, ServedModel model, long started) {
        AtomicReference<Exchange> made = new AtomicReference<>();
        E exchange = endpoint.exchange(context, request, model, caller, outcome -> {
            limits.release(caller.entity(), caller.project());
            quotas.add(caller.entity(), (long) outcome.promptTokens() + outcome.completionTokens());
            record(caller, made.get() == null ? model : made.get().model(), started, outcome);
        });
        made.set(exchange);
        boolean stream = exchange.stream();
        metrics.started(model, stream, System.nanoTime() - started);
        exchange.whenFinished(outcome -> metrics.ended(model, stream,
                exchange.firstTokenAt() == 0 ? -1 : exchange.firstTokenAt() - started, outcome));
        underWay.add(exchange);
        exchange.whenFinished(outcome -> underWay.remove(exchange));
        if (drain.draining()) { // the drain began while this request was being checked
            exchange.fail(InferenceFailure.shuttingDown());
            exchange.finish(new Outcome(503, 0, 0));
            return;
        }
        answer(endpoint, caller, request, exchange, model, model.fallbacks(), model.id());
    }

    /**
     * Starts the answer of {@code model}; while {@code fallbacks} are left, a failure with 429 or a 5xx before anything
     * of the answer went out is answered by the next of them instead (a model not found or refusing the request is
     * passed over), its id the answer's {@code model}, the header {@code Fulcrum-Fallback-From} naming
     * {@code askedFor}. A fallback's own fallbacks are not followed.
     */
    private <R, E extends Exchange> void answer(Endpoint<R, E> endpoint, InferenceCaller caller, R request, E exchange,
            ServedModel model, List<String> fallbacks, String askedFor) {
        if (!fallbacks.isEmpty()) {
            exchange.rescueWith(failure -> failure.status() == 429 || failure.status() >= 500
                    ? fallBack(endpoint, caller, request, exchange, failure, fallbacks, askedFor)
                    : false);
        }
        try {
            endpoint.answer(model.backend(), exchange);
        } catch (RuntimeException e) {
            ApiException full = StorageFull.refusal(e, "POST " + endpoint.path() + " of " + model.id());
            if (full == null) {
                LOG.error(endpoint.path() + " failed on " + model.id(), e);
            }
            InferenceFailure failure = full != null ? InferenceFailure.of(full)
                    : new InferenceFailure(Kind.FAILED, "Internal server error", null, null, null);
            exchange.fail(failure);
            exchange.finish(new Outcome(failure.status(), 0, 0));
        }
    }

    /** Finds the first of {@code fallbacks} that takes the request and answers with it; true (it takes over). */
    private <R, E extends Exchange> boolean fallBack(Endpoint<R, E> endpoint, InferenceCaller caller, R request,
            E exchange, InferenceFailure failure, List<String> fallbacks, String askedFor) {
        String next = fallbacks.get(0);
        List<String> rest = fallbacks.subList(1, fallbacks.size());
        Future.fromCompletionStage(models.find(next, caller), vertx.getOrCreateContext()).onComplete(found -> {
            ServedModel fallback = found.succeeded() ? found.result().orElse(null) : null;
            if (fallback != null) {
                try {
                    endpoint.check(fallback.backend(), request, fallback.id());
                } catch (InferenceFailure refused) {
                    fallback = null;
                }
            }
            if (fallback == null && !rest.isEmpty()) {
                fallBack(endpoint, caller, request, exchange, failure, rest, askedFor);
            } else if (fallback == null) {
                exchange.fail(failure);
                exchange.finish(new Outcome(failure.status(), 0, 0));
            } else {
                metrics.fellBack(askedFor, fallback.id(), failure.status());
                exchange.answerAs(fallback, askedFor);
                answer(endpoint, caller, request, exchange, fallback, rest, askedFor);
            }
        });
        return true;
    }

    /** A request refused before it reached the backend (quota, concurrency) still counts as a request. */
    private void refuse(RoutingContext context, InferenceCaller caller, ServedModel model, long started,
            Throwable cause) {
        fail(context, cause);
        int status = cause instanceof InferenceFailure failure ? failure.status() : 500;
        metrics.refused(status);
        record(caller, model, started, new Outcome(status, 0, 0));
    }

    private void record(InferenceCaller caller, ServedModel model, long started, Outcome outcome) {
        metrics.request(model, outcome, System.nanoTime() - started);
        usage.record(new Usage(OffsetDateTime.now(ZoneOffset.UTC), caller.entity(), caller.project(),
                caller.caller().userId(), model.id(), outcome.promptTokens(), outcome.completionTokens(),
                (int) TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), outcome.status(),
                UsageMeter.COMPLETION));
    }

    static void fail(RoutingContext context, Throwable cause) {
        if (context.response().ended() || context.response().closed()) {
            return;
        }
        if (cause instanceof java.util.concurrent.CompletionException wrapped && wrapped.getCause() != null) {
            cause = wrapped.getCause(); // a model source's failure, passed through dependent stages
        }
        InferenceFailure failure;
        if (cause instanceof InferenceFailure known) {
            failure = known;
        } else if (cause instanceof ApiException api) {
            failure = InferenceFailure.of(api);
        } else {
            ApiException full = StorageFull.refusal(cause, context.request().method() + " " + context.request().path());
            if (full == null) {
                LOG.error("Inference request failed", cause);
            }
            failure = full != null ? InferenceFailure.of(full)
                    : new InferenceFailure(Kind.FAILED, "Internal server error", null, null, null);
        }
        OpenAiErrors.write(context.response(), failure);
    }

}
