package dev.fulcrum.inference.gateway;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.annotation.PostConstruct;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;

import dev.fulcrum.inference.Exchange.Outcome;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.ServedModel;

/**
 * The inference metrics (docs/operations.md). Labelled by {@code model}: the catalog model that serves a request (for a
 * trained model, its base model: {@link ServedModel#root}), so the label's values are bounded by the catalog. No
 * project or team label: their number is bounded by nobody's configuration. A model's meters are resolved on its first
 * request and kept; counting is then a map lookup and an atomic add.
 */
@Startup // its meters are on the page from the start, at zero
@Singleton
public class InferenceMetrics {

    static final Duration[] BUCKETS = { Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
            Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
            Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10),
            Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(120), Duration.ofSeconds(300) };

    /** Fulcrum's own share of a request is small; its buckets are finer. */
    static final Duration[] ADDED_BUCKETS = { Duration.ofNanos(100_000), Duration.ofNanos(250_000),
            Duration.ofNanos(500_000), Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5),
            Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
            Duration.ofMillis(250), Duration.ofSeconds(1) };

    @Inject
    MeterRegistry registry;

    private final Map<String, ModelMeters> models = new ConcurrentHashMap<>();
    private final AtomicInteger streams = new AtomicInteger();
    private final AtomicInteger plain = new AtomicInteger();
    private Counter quotaRefusals;
    private Counter concurrencyRefusals;

    @PostConstruct
    void register() {
        quotaRefusals = refusals("quota", "402");
        concurrencyRefusals = refusals("concurrency", "429");
        Gauge.builder("fulcrum.inference.in.flight", streams, AtomicInteger::get)
                .description("Chat completions under way on this replica").tag("stream", "true").register(registry);
        Gauge.builder("fulcrum.inference.in.flight", plain, AtomicInteger::get)
                .description("Chat completions under way on this replica").tag("stream", "false").register(registry);
    }

    private Counter refusals(String reason, String status) {
        return Counter.builder("fulcrum.inference.refusals")
                .description("Requests refused before reaching a model: quota (402), concurrency limit (429)")
                .tag("reason", reason).tag("status", status).register(registry);
    }

    /** A request refused with this status (402: quota, 429: the project's concurrency limit). */
    void refused(int status) {
        if (status == 402) {
            quotaRefusals.increment();
        } else if (status == 429) {
            concurrencyRefusals.increment();
        }
    }

    /** A completion starts on its backend; {@code addedNanos} is Fulcrum's own time before it. */
    void started(ServedModel model, boolean stream, long addedNanos) {
        (stream ? streams : plain).incrementAndGet();
        meters(model).added.record(addedNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * A completion that {@link #started} ended. {@code firstTokenNanos}: from its arrival to its first streamed
     * content, or -1 when none came.
     */
    void ended(ServedModel model, boolean stream, long firstTokenNanos, Outcome outcome) {
        (stream ? streams : plain).decrementAndGet();
        ModelMeters meters = meters(model);
        if (firstTokenNanos >= 0) {
            meters.firstToken.record(firstTokenNanos, TimeUnit.NANOSECONDS);
        }
        int status = outcome.status();
        if (status >= 400 && status != 499) {
            meters.upstreamError(upstreamKind(status)).increment();
        }
    }

    /** Any request that reached a model, refused or answered: counted, timed, and its tokens added. */
    void request(ServedModel model, Outcome outcome, long nanos) {
        ModelMeters meters = meters(model);
        meters.requests(outcome.status()).increment();
        meters.duration.record(nanos, TimeUnit.NANOSECONDS);
        if (outcome.promptTokens() > 0) {
            meters.promptTokens.increment(outcome.promptTokens());
        }
        if (outcome.completionTokens() > 0) {
            meters.completionTokens.increment(outcome.completionTokens());
        }
    }

    /** A request for {@code model} answered by its fallback {@code fallback} after a failure with {@code status}. */
    void fellBack(String model, String fallback, int status) {
        Counter.builder("fulcrum.inference.fallbacks")
                .description("Requests a fallback model answered, by the model asked for and the failure's status")
                .tag("model", model).tag("fallback", fallback).tag("status", Integer.toString(status))
                .register(registry).increment();
    }

    /** What a failed answer of a backend means, from its status (see {@link InferenceFailure}). */
    static String upstreamKind(int status) {
        return switch (status) {
            case 429 -> "at_capacity";
            case 502 -> "bad_response";
            case 503 -> "unavailable";
            case 504 -> "timeout";
            case 500 -> "internal";
            default -> status < 500 ? "rejected" : "other";
        };
    }

    private ModelMeters meters(ServedModel model) {
        String name = model.root();
        ModelMeters meters = models.get(name);
        return meters != null ? meters : models.computeIfAbsent(name, ModelMeters::new);
    }

    private final class ModelMeters {
        final String model;
        final Timer duration;
        final Timer firstToken;
        final Timer added;
        final Counter promptTokens;
        final Counter completionTokens;
        final Map<Integer, Counter> requests = new ConcurrentHashMap<>();
        final Map<String, Counter> upstreamErrors = new ConcurrentHashMap<>();

        ModelMeters(String model) {
            this.model = model;
            duration = Timer.builder("fulcrum.inference.request.duration")
                    .description("Chat completions from arrival to the end of the answer").tag("model", model)
                    .serviceLevelObjectives(BUCKETS).register(registry);
            firstToken = Timer.builder("fulcrum.inference.time.to.first.token")
                    .description("Streamed chat completions: from arrival to the first content sent to the client")
                    .tag("model", model).serviceLevelObjectives(BUCKETS).register(registry);
            added = Timer.builder("fulcrum.inference.added.time")
                    .description("Fulcrum's own time before a completion starts on its backend: key, body, model,"
                            + " quota and concurrency checks")
                    .tag("model", model).serviceLevelObjectives(ADDED_BUCKETS).register(registry);
            promptTokens = Counter.builder("fulcrum.inference.prompt.tokens").description("Prompt tokens used")
                    .tag("model", model).register(registry);
            completionTokens = Counter.builder("fulcrum.inference.completion.tokens")
                    .description("Completion tokens used").tag("model", model).register(registry);
        }

        Counter requests(int status) {
            Counter counter = requests.get(status);
            return counter != null ? counter
                    : requests.computeIfAbsent(status,
                            s -> Counter.builder("fulcrum.inference.requests")
                                    .description("Chat completions for a catalog model, by status answered")
                                    .tag("model", model).tag("status", Integer.toString(s)).register(registry));
        }

        Counter upstreamError(String kind) {
            Counter counter = upstreamErrors.get(kind);
            return counter != null ? counter
                    : upstreamErrors.computeIfAbsent(kind,
                            k -> Counter.builder("fulcrum.inference.upstream.errors")
                                    .description("Completions the model server failed, by kind").tag("model", model)
                                    .tag("kind", k).register(registry));
        }
    }
}
