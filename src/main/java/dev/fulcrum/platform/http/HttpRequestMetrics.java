package dev.fulcrum.platform.http;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import jakarta.annotation.PostConstruct;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.http.Outcome;
import io.quarkus.runtime.Startup;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.impl.HttpServerRequestInternal;
import io.vertx.ext.web.RoutingContext;

/**
 * The HTTP server's request metrics (docs/operations.md): {@code http_server_requests_seconds}, a histogram labelled by
 * {@code method}, {@code uri}, {@code status} and {@code outcome}, and {@code http_server_active_requests}. A route
 * ahead of every other ({@link RequestFront}) starts the clock and records when the answer ends (or the connection
 * closes first). A request's timer is found in a map by its labels and built on the first request that has them.
 * (Quarkus's binder of the same names is off, {@code quarkus.micrometer.binder.http-server.enabled=false}: it built
 * each request's meter id from its tags and hooked every connection's reads and writes, 5 to 10 % of the CPU of a
 * proxied chat completion, bench/README.md.)
 * <p>
 * No label value comes from a client. {@code uri} is the template of the JAX-RS method RESTEasy matched or of the
 * Fulcrum Vert.x route that answered ({@link #template}), whatever the status; without one, {@code NOT_FOUND} for a 404
 * and {@code REDIRECTION} for a 3xx. Answered before a method matched, and labelled {@code UNKNOWN}, are 405 (a method
 * the path does not take), 406, 413, 414, 415, RESTEasy's own answer to {@code OPTIONS} (200) and a 5xx. Quarkus's own
 * routes under {@code /q/} are labelled by their paths (a health group's by {@code /q/health/group/{group}}), files
 * served as they are (the console's assets) by their path: both are the jar's. A method outside HTTP's own is labelled
 * {@code UNKNOWN} too. Past {@value #MAX_URIS} distinct {@code uri} values (the API and the console have about 160
 * templates) a new one is labelled {@code UNKNOWN}: a last guard that the templates alone never reach.
 */
@Startup // the meters are on the page from the start
@Singleton
public class HttpRequestMetrics {

    /** The label value of a request that matched no template. */
    public static final String UNKNOWN = "UNKNOWN";
    /** Distinct {@code uri} values at most. */
    public static final int MAX_URIS = 400;
    /**
     * Where RESTEasy Reactive puts the matched template, in the request's Vert.x context, for the metrics and the
     * traces to read (its ObservabilityUtil).
     */
    private static final String TEMPLATE = "UrlPathTemplate";
    /** Quarkus's own routes: metrics, health and the OpenAPI document (a sub-router's, whose paths are fixed). */
    private static final String QUARKUS = "/q/";
    private static final Set<String> QUARKUS_PATHS = Set.of("/q/metrics", "/q/health", "/q/health/live",
            "/q/health/ready", "/q/health/started", "/q/health/group", "/q/health/wellness", "/q/openapi");
    private static final String GROUPS = "/q/health/group/";
    private static final Set<HttpMethod> METHODS = Set.copyOf(HttpMethod.values());
    private static final Duration[] BUCKETS = { Duration.ofMillis(1), Duration.ofNanos(2_500_000), Duration.ofMillis(5),
            Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100),
            Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500),
            Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60) };

    /** The labels of a request's timer. */
    private record Labels(String method, String uri, int status) {
    }

    @Inject
    MeterRegistry registry;

    private final Map<Labels, Timer> timers = new ConcurrentHashMap<>();
    private final Set<String> uris = ConcurrentHashMap.newKeySet();
    private final LongAdder active = new LongAdder(); // both event loops change it: no shared counter to fight over

    @PostConstruct
    void register() {
        Gauge.builder("http.server.active.requests", active, LongAdder::sum)
                .description("Requests under way on this replica").register(registry);
    }

    /** Names the template of a request that a Vert.x route of Fulcrum's answers, as RESTEasy does for its methods. */
    public static void template(RoutingContext context, String template) {
        if (context.request() instanceof HttpServerRequestInternal request) {
            request.context().putLocal(TEMPLATE, template);
        }
    }

    /** A request begins ({@link RequestFront}): counted as active, and the clock's reading it is timed from. */
    long begin() {
        active.increment();
        return System.nanoTime();
    }

    /** The request that began at {@code start} ended: its timer records it. */
    void end(RoutingContext context, long start) {
        long nanos = System.nanoTime() - start;
        active.decrement();
        HttpServerRequest request = context.request();
        int status = context.response().getStatusCode();
        String method = METHODS.contains(request.method()) ? request.method().name() : UNKNOWN;
        timer(new Labels(method, uri(context, status), status)).record(nanos, TimeUnit.NANOSECONDS);
    }

    private static String uri(RoutingContext context, int status) {
        if (context.request() instanceof HttpServerRequestInternal request
                && request.context().getLocal(TEMPLATE) instanceof String template) {
            return template;
        }
        if (status == 404) {
            return "NOT_FOUND";
        }
        if (status / 100 == 3) {
            return "REDIRECTION";
        }
        String path = context.normalizedPath();
        if (path.startsWith(QUARKUS)) { // one route under /q/ takes any name: a health group
            return QUARKUS_PATHS.contains(path) ? path : path.startsWith(GROUPS) ? GROUPS + "{group}" : UNKNOWN;
        }
        return status < 400 && context.request().method() != HttpMethod.OPTIONS ? path : UNKNOWN;
    }

    private Timer timer(Labels labels) {
        Timer timer = timers.get(labels);
        return timer != null ? timer : timers.computeIfAbsent(labels, this::create);
    }

    private Timer create(Labels labels) {
        String uri = labels.uri();
        if (!uris.contains(uri) && uris.size() >= MAX_URIS) {
            uri = UNKNOWN;
        }
        uris.add(uri);
        return Timer.builder("http.server.requests").description("HTTP requests answered, by path template")
                .tag("method", labels.method()).tag("uri", uri).tag("status", Integer.toString(labels.status()))
                .tag("outcome", Outcome.forStatus(labels.status()).name()).serviceLevelObjectives(BUCKETS)
                .register(registry);
    }
}
