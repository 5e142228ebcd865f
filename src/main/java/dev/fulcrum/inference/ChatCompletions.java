package dev.fulcrum.inference;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.inference.ChatExchange.Outcome;
import dev.fulcrum.inference.UsageRecorder.Usage;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.FulcrumConfig;

/**
 * {@code POST /v1/chat/completions} (and with a trailing slash), as described in {@code openapi/inference.yaml}. A
 * Vert.x route rather than a JAX-RS resource: the body is kept as JSON (an upstream gets every field), the answer may
 * be a stream passed through as it arrives, and nothing on the way blocks the event loop (keys, memberships, quotas and
 * concurrency slots come from memory or from a worker thread; see the classes for what is shared between replicas). The
 * order: body size, key and project, body, model, the backend's own checks, quota, concurrency, then the backend.
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

    void routes(@Observes Router router) {
        for (String path : new String[] { "/v1/chat/completions", "/v1/chat/completions/" }) {
            router.route(HttpMethod.POST, path).order(-100).handler(this::handle);
        }
    }

    void handle(RoutingContext context) {
        long started = System.nanoTime();
        HttpServerRequest request = context.request();
        long max = fulcrum.maxJsonRequestBytes();
        String length = request.getHeader("Content-Length");
        try {
            if (length == null || Long.parseLong(length.strip()) > max) {
                OpenAiErrors.write(context.response(), InferenceFailure.tooLarge(max));
                return;
            }
        } catch (NumberFormatException e) {
            OpenAiErrors.write(context.response(), InferenceFailure.invalid(null, "Invalid Content-Length"));
            return;
        }
        String project = firstOf(request.getHeader("Compat-Project"), request.getHeader("OpenAI-Project"));
        Future<InferenceCaller> caller = callers.resolve(request.getHeader("Authorization"), project);
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
        record(caller, model, started, new Outcome(status, 0, 0));
    }

    private void record(InferenceCaller caller, ServedModel model, long started, Outcome outcome) {
        usage.record(new Usage(OffsetDateTime.now(ZoneOffset.UTC), caller.entity(), caller.project(),
                caller.caller().userId(), model.id(), outcome.promptTokens(), outcome.completionTokens(),
                (int) TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), outcome.status()));
    }

    private static void fail(RoutingContext context, Throwable cause) {
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
