package dev.fulcrum.inference.engine.upstream;

import java.net.InetAddress;
import java.net.URI;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

import org.jboss.logging.Logger;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.net.SocketAddress;

import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.catalog.CatalogModel;
import dev.fulcrum.platform.http.OutboundHttp;

/**
 * The replicas of one catalog model's server and how a request chooses one (docs/inference.md, "A model served by many
 * servers"): its base URLs, each host name that resolves to several addresses one replica per address (resolved again
 * every {@code dns-refresh}: new addresses get traffic, addresses gone drain); least outstanding requests by default
 * (two random choices, weighted), or prefix affinity; replicas that have a request's adapter loaded first; failures
 * counted per replica, ejecting it for a cool-down that grows with each ejection (never more than
 * {@code max-ejected-percent} of them at once), probed while ejected and restored when the cool-down is over and a
 * probe answers.
 */
final class Replicas {

    private static final Logger LOG = Logger.getLogger(Replicas.class);
    /** Prefix affinity: how many keys a model remembers the replica of. */
    static final int KEYS_KEPT = 100_000;

    /** One configured base URL: its weight, and whether its host is a name the gateway resolves. */
    record Endpoint(String url, String host, int port, int weight, boolean named) {

        /** {@code url}, optionally with the fragment {@code #weight=N}. */
        static Endpoint parse(String configured, boolean resolveHosts) {
            String url = configured.strip();
            int weight = 1;
            int hash = url.indexOf('#');
            if (hash >= 0) {
                String fragment = url.substring(hash + 1);
                url = url.substring(0, hash);
                if (!fragment.startsWith("weight=")) {
                    throw new IllegalArgumentException(
                            "the only fragment of a base URL is #weight=N, not #" + fragment);
                }
                weight = Integer.parseInt(fragment.substring("weight=".length()));
                if (weight < 1 || weight > 100) {
                    throw new IllegalArgumentException("a weight is 1 to 100, not " + weight);
                }
            }
            URI uri = URI.create(url);
            int port = uri.getPort() >= 0 ? uri.getPort() : "https".equals(uri.getScheme()) ? 443 : 80;
            String host = uri.getHost();
            boolean literal = host.startsWith("[") || host.chars().allMatch(c -> c == '.' || Character.isDigit(c));
            return new Endpoint(url, host, port, weight, resolveHosts && !literal);
        }
    }

    private final CatalogModel model;
    private final InferenceConfig.Routing routing;
    private final Vertx vertx;
    private final OutboundHttp http;
    private final HostResolver resolver;
    private final RoutingMetrics metrics;
    private final ModelServer.Settings settings;
    private final List<Endpoint> endpoints;
    private final Clock clock;
    /** The replicas taking requests or ejected, by endpoint (draining ones are not here). */
    private final Map<Endpoint, List<Replica>> byEndpoint = new LinkedHashMap<>();
    private volatile List<Replica> replicas = List.of();
    /** Replicas whose address left their host name, finishing the requests under way. */
    private final List<Replica> leaving = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile Ring ring = new Ring(List.of());
    /** Prefix affinity: the replica each recent key went to, by the key's hash (least recently used out). */
    private final Map<Long, Replica> keys = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Replica> eldest) {
            return size() > KEYS_KEPT;
        }
    };
    /** The probes' timer while a replica is ejected, else -1. */
    private long probeTimer = -1;
    private final long dnsTimer;
    private volatile boolean closed;

    Replicas(CatalogModel model, InferenceConfig.Routing routing, Vertx vertx, OutboundHttp http, HostResolver resolver,
            RoutingMetrics metrics, Clock clock) {
        this.model = model;
        this.routing = routing;
        this.vertx = vertx;
        this.http = http;
        this.resolver = resolver;
        this.metrics = metrics;
        this.clock = clock;
        this.settings = new ModelServer.Settings(model.apiKey(), model.connectTimeoutMs(), model.timeoutMs(),
                model.maxConcurrency(), model.maxQueue());
        this.endpoints = model.baseUrls().stream().map(url -> Endpoint.parse(url, routing.resolveHosts())).toList();
        for (Endpoint endpoint : endpoints) {
            // until its name resolves, a named endpoint is one replica whose connections resolve the name themselves
            byEndpoint.put(endpoint, List.of(replica(endpoint, null)));
        }
        publish();
        boolean anyNamed = endpoints.stream().anyMatch(Endpoint::named);
        dnsTimer = anyNamed ? vertx.setPeriodic(1, routing.dnsRefresh().toMillis(), id -> resolve()) : -1;
    }

    String modelId() {
        return model.id();
    }

    CatalogModel model() {
        return model;
    }

    /** The replicas taking requests or ejected, in the order of their endpoints and addresses. */
    List<Replica> all() {
        return replicas;
    }

    /** Those and the replicas still draining (the admin API's list). */
    List<Replica> shown() {
        List<Replica> shown = new ArrayList<>(replicas);
        shown.addAll(leaving);
        return shown;
    }

    private Replica replica(Endpoint endpoint, InetAddress address) {
        SocketAddress socket = address == null ? null
                : SocketAddress.inetSocketAddress(endpoint.port(), address.getHostAddress());
        String name = address == null ? endpoint.host() + ":" + endpoint.port()
                : (address.getHostAddress().contains(":") ? "[" + address.getHostAddress() + "]"
                        : address.getHostAddress()) + ":" + endpoint.port();
        Replica replica = new Replica(endpoint.url(), name, endpoint.weight(),
                new ModelServer(http, endpoint.url(), socket, settings),
                CatalogModel.PREFIX_AFFINITY.equals(model.routing()));
        metrics.added(model.id(), replica);
        return replica;
    }

    private synchronized void publish() {
        List<Replica> all = new ArrayList<>();
        byEndpoint.values().forEach(all::addAll);
        replicas = List.copyOf(all);
        ring = new Ring(replicas);
    }

    /** Resolves every named endpoint again; a name that does not resolve keeps the replicas it had. */
    private void resolve() {
        for (Endpoint endpoint : endpoints) {
            if (!endpoint.named()) {
                continue;
            }
            resolver.resolve(endpoint.host()).whenComplete((addresses, failure) -> {
                if (failure != null || addresses.isEmpty()) {
                    LOG.debugf("%s of model %s did not resolve: %s", endpoint.host(), model.id(),
                            failure == null ? "no address" : failure.getMessage());
                } else {
                    vertx.runOnContext(v -> resolved(endpoint, addresses));
                }
            });
        }
    }

    private synchronized void resolved(Endpoint endpoint, List<InetAddress> addresses) {
        if (closed) {
            return;
        }
        List<Replica> current = byEndpoint.get(endpoint);
        Map<String, Replica> kept = new HashMap<>();
        for (Replica replica : current) {
            if (replica.server.address() != null) {
                kept.put(replica.server.address().hostAddress(), replica);
            }
        }
        List<Replica> next = new ArrayList<>();
        for (InetAddress address : addresses) {
            Replica existing = kept.remove(address.getHostAddress());
            next.add(existing != null ? existing : replica(endpoint, address));
        }
        List<Replica> gone = current.stream().filter(r -> !next.contains(r)).toList();
        if (gone.isEmpty() && next.size() == current.size()) {
            return;
        }
        byEndpoint.put(endpoint, List.copyOf(next));
        publish();
        LOG.infof("Model %s: %s resolves to %s", model.id(), endpoint.host(), next.stream().map(r -> r.name).toList());
        gone.forEach(this::drain);
    }

    /** A replica that left: no new requests; its connections close once those under way are done. */
    private void drain(Replica replica) {
        replica.drain();
        leaving.add(replica);
        vertx.setPeriodic(100, id -> {
            if (replica.inFlight() == 0 || closed) {
                vertx.cancelTimer(id);
                leaving.remove(replica);
                metrics.removed(model.id(), replica);
                replica.server.close();
            }
        });
    }

    /**
     * The replica for a request's next attempt, or null when none may take it. {@code key}: its prefix key (prefix
     * affinity), or null; {@code adapter}: its LoRA adapter, or null; {@code tried}: replicas its earlier attempts
     * failed on. When every replica is ejected and the request has no fallback model, an ejected one is tried all the
     * same.
     */
    Replica choose(String key, String adapter, Set<Replica> tried, boolean hasFallback) {
        List<Replica> all = replicas;
        if (all.size() == 1 && tried.isEmpty() && all.get(0).available()) {
            return all.get(0); // one replica taking requests: nothing to choose
        }
        List<Replica> candidates = new ArrayList<>(all.size());
        for (Replica replica : all) {
            if (replica.available() && !tried.contains(replica)) {
                candidates.add(replica);
            }
        }
        if (candidates.isEmpty() && !hasFallback) {
            for (Replica replica : all) {
                if (!replica.draining() && !tried.contains(replica)) {
                    candidates.add(replica);
                }
            }
        }
        if (candidates.size() <= 1) {
            return candidates.isEmpty() ? null : candidates.get(0);
        }
        if (adapter != null) {
            List<Replica> loaded = candidates.stream().filter(r -> r.hasAdapter(adapter)).toList();
            if (!loaded.isEmpty()) {
                Replica chosen = pick(key, loaded, candidates);
                if (chosen != null) {
                    return chosen;
                }
            }
        }
        Replica chosen = pick(key, candidates, candidates);
        return chosen != null ? chosen : leastLoaded(candidates);
    }

    /**
     * A replica of {@code among} for the key whose load is within the bound of all {@code candidates}' (prefix
     * affinity), or the less loaded of two random ones (least outstanding); null when none is within the bound.
     */
    private Replica pick(String key, List<Replica> among, List<Replica> candidates) {
        if (key != null && CatalogModel.PREFIX_AFFINITY.equals(model.routing())) {
            return affine(Ring.hash(key), among, candidates);
        }
        Replica chosen = twoChoices(among);
        if (among != candidates && !withinBound(chosen, candidates)) {
            return null;
        }
        return chosen;
    }

    /**
     * Prefix affinity: the replica the key went to last while it may keep it (a candidate of {@code among}, its
     * averaged load within the bound), else the key placed anew on the ring and remembered.
     */
    private Replica affine(long hash, List<Replica> among, List<Replica> candidates) {
        Replica kept;
        synchronized (keys) {
            kept = keys.get(hash);
        }
        if (kept != null && among.contains(kept) && Ring.keeps(kept, candidates, routing.affinityLoadBound())) {
            return kept;
        }
        Replica placed = ring.place(hash, candidates, routing.affinityLoadBound(), among::contains);
        if (placed != null) {
            synchronized (keys) {
                keys.put(hash, placed);
            }
        }
        return placed;
    }

    private boolean withinBound(Replica replica, List<Replica> candidates) {
        int total = 0;
        int weights = 0;
        for (Replica candidate : candidates) {
            total += candidate.inFlight();
            weights += candidate.weight;
        }
        return replica.inFlight() + 1 <= Math
                .ceil(routing.affinityLoadBound() * (total + 1) * replica.weight / weights);
    }

    /** Power of two random choices, each drawn by weight: the one with fewer requests under way per weight. */
    private static Replica twoChoices(List<Replica> among) {
        if (among.size() == 1) {
            return among.get(0);
        }
        Replica first = drawn(among, null);
        Replica second = drawn(among, first);
        return better(first, second) ? first : second;
    }

    private static Replica drawn(List<Replica> among, Replica not) {
        int weights = 0;
        for (Replica replica : among) {
            weights += replica == not ? 0 : replica.weight;
        }
        int ticket = ThreadLocalRandom.current().nextInt(weights);
        for (Replica replica : among) {
            if (replica == not) {
                continue;
            }
            ticket -= replica.weight;
            if (ticket < 0) {
                return replica;
            }
        }
        throw new IllegalStateException("no replica drawn");
    }

    /** Fewer requests under way per weight; when equal, fewer started per weight (a round robin under light load). */
    private static boolean better(Replica a, Replica b) {
        double loadA = (a.inFlight() + 1.0) / a.weight;
        double loadB = (b.inFlight() + 1.0) / b.weight;
        if (loadA != loadB) {
            return loadA < loadB;
        }
        return (double) a.started() / a.weight <= (double) b.started() / b.weight;
    }

    private static Replica leastLoaded(List<Replica> candidates) {
        Replica best = candidates.get(0);
        for (Replica candidate : candidates) {
            if (better(candidate, best)) {
                best = candidate;
            }
        }
        return best;
    }

    /** An attempt's end on {@code replica}: a failure counts towards its ejection, an answer restores its count. */
    void ended(Replica replica, long nanos, boolean answered, boolean failing, String what) {
        replica.end(nanos, answered);
        if (failing) {
            if (replica.failed(routing.consecutiveFailures())) {
                eject(replica, what);
            }
        } else if (answered) {
            replica.succeeded();
        }
    }

    private synchronized void eject(Replica replica, String why) {
        List<Replica> all = replicas;
        long ejected = all.stream().filter(Replica::ejected).count();
        long allowed = Math.max(1, all.size() * routing.maxEjectedPercent() / 100);
        if (ejected >= allowed || !all.contains(replica)) {
            return;
        }
        Instant until = replica.eject(why, routing.baseEjection(), routing.maxEjection(), clock.instant());
        metrics.ejected(model.id(), replica, why);
        if (probeTimer < 0 && !closed) {
            probeTimer = vertx.setPeriodic(routing.probeInterval().toMillis(), id -> probe());
        }
        LOG.warnf("Model %s: replica %s ejected until %s (%s)", model.id(), replica.name, until, why);
    }

    /**
     * Probes each ejected replica whose cool-down is over; those that answer take requests again. The timer stops when
     * no replica is ejected.
     */
    private void probe() {
        Instant now = clock.instant();
        for (Replica replica : replicas) {
            if (replica.coolDownOver(now)) {
                probe(replica, "/health", true);
            }
        }
        synchronized (this) { // an ejection starts the timer under the same lock
            if (probeTimer >= 0 && replicas.stream().noneMatch(Replica::ejected)) {
                vertx.cancelTimer(probeTimer);
                probeTimer = -1;
            }
        }
    }

    /** vLLM's {@code GET /health}; a server without it (404) is asked {@code GET {base-url}/models}. */
    private void probe(Replica replica, String path, boolean firstTry) {
        replica.server.client().request(replica.server.options(HttpMethod.GET, path, "*/*"))
                .compose(request -> request.send().compose(response -> response.body().map(response.statusCode())))
                .onComplete(done -> {
                    if (done.succeeded() && done.result() >= 200 && done.result() < 300) {
                        replica.restore(clock.instant());
                        metrics.restored(model.id(), replica);
                        LOG.infof("Model %s: replica %s answers its probe and takes requests again", model.id(),
                                replica.name);
                    } else if (done.succeeded() && done.result() == 404 && firstTry) {
                        probe(replica, "models", false);
                    }
                });
    }

    /** Stops the timers and, once their requests are done, closes every replica's connections. */
    synchronized void close() {
        closed = true;
        if (probeTimer >= 0) {
            vertx.cancelTimer(probeTimer);
        }
        if (dnsTimer >= 0) {
            vertx.cancelTimer(dnsTimer);
        }
        for (Replica replica : shown()) {
            metrics.removed(model.id(), replica);
            replica.server.close();
        }
    }
}
