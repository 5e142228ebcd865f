package dev.fulcrum.inference.engine.upstream;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import io.micrometer.core.instrument.Counter;

/**
 * One replica of a model server as this gateway sees it: its connections ({@link ModelServer}), its weight, the
 * requests under way on it, its recent latency, whether it is ejected (until when, why, how often), and the LoRA
 * adapters it has loaded (least recently used first). What one gateway replica knows; others keep their own.
 */
final class Replica {

    /** How much the latest attempt moves the recent latency (an exponentially weighted mean). */
    private static final double LATENCY_WEIGHT = 0.2;
    /** The time constant of the smoothed load, in nanoseconds: a second. */
    private static final double LOAD_TAU_NANOS = 1e9;

    final String url;
    /** How the replica is named in metrics and the admin API: the URL's host and port, or the address it stands for. */
    final String name;
    final int weight;
    final ModelServer server;
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Requests started on it, the tie-breaker of equally loaded replicas (a round robin under light load). */
    private final AtomicLong started = new AtomicLong();
    private final Map<String, OpenAiCompatibleBackend> backends = new ConcurrentHashMap<>();
    /** Its counters of attempts by outcome ({@link RoutingMetrics}), found without building a key per request. */
    private final Map<String, Counter> attempts = new ConcurrentHashMap<>();
    /** Adapters loaded or being loaded, by name, in the order of their last use (moved by {@link #adapter} only). */
    private final LinkedHashMap<String, CompletableFuture<Void>> adapters = new LinkedHashMap<>();

    /**
     * The recent latency, written without a lock on the requests' path: two attempts that end at the same moment may
     * count as one (a figure to show, not to route by).
     */
    private volatile double latencyMillis = -1;
    /** Whether its load averaged over time is kept (prefix affinity routes by it; nothing else pays for it). */
    private final boolean smoothing;
    /** The requests under way averaged over about the last second (time-weighted), and when it was last brought up. */
    private double smoothedLoad;
    private long smoothedAt = System.nanoTime();
    private int consecutiveFailures;
    private int ejections;
    /** Read without the lock by every request's choice; written under it. */
    private volatile Instant ejectedUntil;
    private Instant restoredAt;
    private String ejectionReason;
    /** Gone from the name's addresses: no new requests; closed once those under way are done. */
    private volatile boolean draining;

    Replica(String url, String name, int weight, ModelServer server, boolean smoothing) {
        this.url = url;
        this.name = name;
        this.weight = weight;
        this.server = server;
        this.smoothing = smoothing;
    }

    /** The backend answering as {@code upstreamModel} on this replica (one per name, sharing the connections). */
    OpenAiCompatibleBackend backend(String upstreamModel, Function<String, OpenAiCompatibleBackend> make) {
        OpenAiCompatibleBackend backend = backends.get(upstreamModel);
        return backend != null ? backend : backends.computeIfAbsent(upstreamModel, make);
    }

    /** The counter of its attempts of that outcome, made by {@code make} the first time. */
    Counter attempts(String outcome, Function<String, Counter> make) {
        Counter counter = attempts.get(outcome);
        return counter != null ? counter : attempts.computeIfAbsent(outcome, make);
    }

    int inFlight() {
        return inFlight.get();
    }

    long started() {
        return started.get();
    }

    void begin() {
        underWay(1);
        started.incrementAndGet();
    }

    /** An attempt on this replica ended after {@code nanos}; its latency counts when the replica answered. */
    void end(long nanos, boolean answered) {
        underWay(-1);
        if (answered) {
            double millis = nanos / 1e6;
            double recent = latencyMillis;
            latencyMillis = recent < 0 ? millis : recent + LATENCY_WEIGHT * (millis - recent);
        }
    }

    /**
     * Adds {@code change} to the requests under way; the averaged load first takes in the time since its last change.
     */
    private void underWay(int change) {
        if (!smoothing) {
            inFlight.addAndGet(change);
            return;
        }
        synchronized (this) {
            smooth(System.nanoTime());
            inFlight.addAndGet(change);
        }
    }

    /**
     * The requests under way on it, averaged over about the last second (the prefix affinity's load: a sustained
     * imbalance moves keys away, a moment's does not).
     */
    synchronized double smoothedLoad() {
        smooth(System.nanoTime());
        return smoothedLoad;
    }

    /** Brings the smoothed load up to {@code now}: the requests under way since the last change held until now. */
    private void smooth(long now) {
        double kept = Math.exp(-(now - smoothedAt) / LOAD_TAU_NANOS);
        smoothedLoad = smoothedLoad * kept + inFlight.get() * (1 - kept);
        smoothedAt = now;
    }

    boolean draining() {
        return draining;
    }

    void drain() {
        draining = true;
    }

    /** Whether new requests may come: not ejected, not draining. */
    boolean available() {
        return !draining && ejectedUntil == null;
    }

    boolean ejected() {
        return ejectedUntil != null;
    }

    /** Counts a failure; true when it is the one that makes enough consecutive failures to eject the replica. */
    synchronized boolean failed(int threshold) {
        consecutiveFailures++;
        return ejectedUntil == null && consecutiveFailures >= threshold;
    }

    synchronized void succeeded() {
        consecutiveFailures = 0;
    }

    /**
     * Ejects the replica for {@code base} times its ejections in a row (the count starts again once it stayed in for
     * {@code max}), at most {@code max}.
     */
    synchronized Instant eject(String reason, java.time.Duration base, java.time.Duration max, Instant now) {
        if (restoredAt != null && restoredAt.plus(max).isBefore(now)) {
            ejections = 0;
        }
        ejections++;
        java.time.Duration length = base.multipliedBy(ejections);
        ejectedUntil = now.plus(length.compareTo(max) > 0 ? max : length);
        ejectionReason = reason;
        return ejectedUntil;
    }

    /** Whether the ejection's cool-down has passed (a successful probe then restores the replica). */
    synchronized boolean coolDownOver(Instant now) {
        return ejectedUntil != null && !ejectedUntil.isAfter(now);
    }

    synchronized void restore(Instant now) {
        ejectedUntil = null;
        ejectionReason = null;
        consecutiveFailures = 0;
        restoredAt = now;
    }

    /** What the admin API shows. */
    synchronized State state() {
        return new State(draining ? "draining" : ejectedUntil != null ? "ejected" : "healthy", ejectedUntil,
                ejectionReason, ejections, inFlight.get(), latencyMillis < 0 ? null : latencyMillis, loadedAdapters());
    }

    record State(String state, Instant ejectedUntil, String ejectionReason, int ejections, int inFlight,
            Double latencyMillis, List<String> adapters) {
    }

    /** The adapter's load on this replica, marked as just used; null when it has none under way or done. */
    synchronized CompletableFuture<Void> adapter(String name) {
        CompletableFuture<Void> load = adapters.remove(name);
        if (load != null) {
            adapters.put(name, load); // the most recently used is last
        }
        return load;
    }

    /** Whether the adapter is loaded here (not only asked for), without marking it used. */
    synchronized boolean hasAdapter(String name) {
        CompletableFuture<Void> load = adapters.get(name);
        return load != null && load.isDone() && !load.isCompletedExceptionally();
    }

    /**
     * Starts tracking a load of {@code name}; answers the loads to undo first to stay within {@code bound} (least
     * recently used, finished ones only).
     */
    synchronized List<String> loading(String name, CompletableFuture<Void> load, int bound) {
        adapters.put(name, load);
        List<String> evicted = new ArrayList<>();
        var entries = adapters.entrySet().iterator();
        while (adapters.size() - evicted.size() > bound && entries.hasNext()) {
            var entry = entries.next();
            if (!entry.getKey().equals(name) && entry.getValue().isDone()) {
                evicted.add(entry.getKey());
            }
        }
        evicted.forEach(adapters::remove);
        return evicted;
    }

    /** Forgets the adapter (a failed load, or the server no longer knows it), unless another load replaced it. */
    synchronized void forget(String name, CompletableFuture<Void> load) {
        adapters.remove(name, load);
    }

    /** Forgets the adapter whatever its load (the server answered 404 for it: it restarted). */
    synchronized void forget(String name) {
        adapters.remove(name);
    }

    private List<String> loadedAdapters() {
        return adapters.entrySet().stream()
                .filter(e -> e.getValue().isDone() && !e.getValue().isCompletedExceptionally()).map(Map.Entry::getKey)
                .toList();
    }
}
