package dev.fulcrum.inference;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.inference.ChatExchange.Outcome;
import dev.fulcrum.inference.UsageRecorder.Usage;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.Drain;
import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.RequestMetricLabels;
import dev.fulcrum.platform.ShutdownSettings;

/**
 * {@code POST /v1/chat/completions} (and with a trailing slash), as described in {@code openapi/inference.yaml}. A
 * Vert.x route rather than a JAX-RS resource: the body is kept as JSON (an upstream gets every field), the answer may
 * be a stream passed through as it arrives, and nothing on the way blocks the event loop (keys, memberships, quotas and
 * concurrency slots come from memory or from a worker thread; see the classes for what is shared between replicas). The
 * order: body size, key and project, body, model, the backend's own checks, quota, concurrency, then the backend.
 * <p>
 * While the replica drains ({@link Drain}) new requests are refused with 503 and {@code Retry-After}; completions under
 * way may finish within {@code fulcrum.shutdown.stream-grace}, and those still running then end with a 503 error (an
 * error event and the end of the stream once it has begun).
 */
@ApplicationScoped
public class ChatCompletions {

    private static final Logger LOG = Logger.getLogger(ChatCompletions.class);

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
    ObjectMapper json;

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

    /** The completions under way on this replica. */
    private final Set<ChatExchange> underWay = ConcurrentHashMap.newKeySet();

    void routes(@Observes Router router) {
        for (String path : new String[] { "/v1/chat/completions", "/v1/chat/completions/" }) {
            router.route(HttpMethod.POST, path).order(-100).handler(this::handle);
        }
    }

    /** Gives the completions under way their grace, then ends those still running. */
    void drain(@Observes Drain.Started started) {
        long remaining = TimeUnit.NANOSECONDS.toMillis(drain.deadline(shutdown.streamGrace()) - System.nanoTime());
        if (underWay.isEmpty()) {
            return;
        }
        LOG.infof("Draining: %d chat completions under way get up to %d ms", underWay.size(), Math.max(0, remaining));
        if (remaining <= 0) {
            interruptUnderWay();
        } else {
            vertx.setTimer(remaining, id -> interruptUnderWay());
        }
    }

    private void interruptUnderWay() {
        for (ChatExchange exchange : underWay) {
            LOG.warnf("Draining: a completion of %s was still running after the grace; it ends with a 503",
                    exchange.model().id());
            exchange.interrupt(InferenceFailure.cutShortByShutdown());
        }
    }

    void handle(RoutingContext context) {
        long started = System.nanoTime();
        RequestMetricLabels.template(context, "/v1/chat/completions");
        if (!admit(context)) {
            return;
        }
        HttpServerRequest request = context.request();
        complete(context, callers.resolve(request.getHeader("Authorization"), project(request)), started);
    }

    /** The project a completion is counted for: {@code Compat-Project} or {@code OpenAI-Project}. */
    static String project(HttpServerRequest request) {
        return firstOf(request.getHeader("Compat-Project"), request.getHeader("OpenAI-Project"));
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
     * The completion of an admitted request for the caller it resolves to (an API key's here, a console session's in
     * {@link ConsoleCompletions}): the same body checks, model, quota, concurrency, backend and usage accounting.
     */
    void complete(RoutingContext context, Future<InferenceCaller> caller, long started) {
        HttpServerRequest request = context.request();
        request.body().onComplete(body -> {
            if (body.failed()) {
                return; // the client went away while sending
            }
            caller.onComplete(known -> {
                if (known.failed()) {
                    fail(context, known.cause());
                } else {
                    accept(context, known.result(), body.result(), started);
                }
            });
        });
        request.resume(); // Quarkus hands requests over paused
    }

    private void accept(RoutingContext context, InferenceCaller caller, Buffer body, long started) {
        ChatRequest request;
        try {
            request = ChatRequest.parse(json, body.getBytes());
        } catch (InferenceFailure failure) {
            fail(context, failure);
            return;
        }
        Future.fromCompletionStage(models.find(request.model(), caller), context.vertx().getOrCreateContext())
                .onComplete(found -> {
                    if (found.failed()) {
                        fail(context, found.cause());
                        return;
                    }
                    Optional<ServedModel> model = found.result();
                    if (model.isEmpty()) {
                        fail(context, InferenceFailure.modelNotFound(request.model()));
                        return;
                    }
                    try {
                        model.get().backend().check(request, model.get().id());
                    } catch (InferenceFailure failure) {
                        fail(context, failure);
                        return;
                    }
                    quotas.check(caller.entity()).onComplete(allowed -> {
                        if (allowed.failed()) {
                            refuse(context, caller, model.get(), started, allowed.cause());
                        } else {
                            start(context, caller, request, model.get(), started);
                        }
                    });
                });
    }

    private void start(RoutingContext context, InferenceCaller caller, ChatRequest request, ServedModel model,
            long started) {
        limits.acquire(caller.entity(), caller.project()).onComplete(slot -> {
            if (slot.failed()) {
                refuse(context, caller, model, started, slot.cause());
            } else {
                run(context, caller, request, model, started);
            }
        });
    }

    private void run(RoutingContext context, InferenceCaller caller, ChatRequest request, ServedModel model,
            long started) {
        ChatExchange exchange = new ChatExchange(context, request, model, caller, outcome -> {
            limits.release(caller.entity(), caller.project());
            quotas.add(caller.entity(), (long) outcome.promptTokens() + outcome.completionTokens());
            record(caller, model, started, outcome);
        });
        metrics.started(model, request.stream(), System.nanoTime() - started);
        exchange.whenFinished(outcome -> metrics.ended(model, request.stream(),
                exchange.firstTokenAt() == 0 ? -1 : exchange.firstTokenAt() - started, outcome));
        underWay.add(exchange);
        exchange.whenFinished(outcome -> underWay.remove(exchange));
        if (drain.draining()) { // the drain began while this request was being checked
            exchange.fail(InferenceFailure.shuttingDown());
            exchange.finish(new Outcome(503, 0, 0));
            return;
        }
        try {
            model.backend().complete(exchange);
        } catch (RuntimeException e) {
            LOG.error("Chat completion failed on " + model.id(), e);
            InferenceFailure failure = new InferenceFailure(500, "Internal server error", null, null, null);
            exchange.fail(failure);
            exchange.finish(new Outcome(500, 0, 0));
        }
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
                (int) TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), outcome.status()));
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
            LOG.error("Chat completion failed", cause);
            failure = new InferenceFailure(500, "Internal server error", null, null, null);
        }
        OpenAiErrors.write(context.response(), failure);
    }

    private static String firstOf(String a, String b) {
        return a != null && !a.isBlank() ? a : b != null && !b.isBlank() ? b : null;
    }
}
