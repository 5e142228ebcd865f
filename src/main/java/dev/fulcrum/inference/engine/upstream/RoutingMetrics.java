package dev.fulcrum.inference.engine.upstream;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

/**
 * The routing metrics of model servers' replicas (docs/operations.md), labelled {@code model} (the catalog model) and
 * {@code replica} (its name: host and port, or the address a host name resolved to): attempts by outcome, retries,
 * ejections by reason, restorations, adapter loads, and the requests under way. A replica's gauge leaves the page with
 * the replica; counters stay.
 */
@Singleton
public class RoutingMetrics {

    @Inject
    MeterRegistry registry;

    private final Map<Replica, Meter> gauges = new ConcurrentHashMap<>();
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    /** A replica appears: its gauge, and its counters that have no other label at zero (on the page from now). */
    void added(String model, Replica replica) {
        gauges.computeIfAbsent(replica,
                r -> Gauge.builder("fulcrum.upstream.in.flight", r, Replica::inFlight)
                        .description("Requests under way on a replica of a model server").tags(tags(model, r))
                        .register(registry));
        retriedCounter(model, replica);
        restoredCounter(model, replica);
        attemptCounter(model, replica, "ok");
        adapterCounter(model, replica, "loaded");
    }

    void removed(String model, Replica replica) {
        Meter gauge = gauges.remove(replica);
        if (gauge != null) {
            registry.remove(gauge);
        }
    }

    /**
     * An attempt ended on the replica: {@code ok}, {@code rejected} (a 4xx), {@code rate_limited},
     * {@code server_error}, {@code unreachable}, {@code connection_lost}, {@code timeout}, {@code busy},
     * {@code bad_answer} or {@code cancelled}.
     */
    void attempt(String model, Replica replica, String outcome) {
        replica.attempts(outcome, o -> attemptCounter(model, replica, o)).increment();
    }

    private Counter attemptCounter(String model, Replica replica, String outcome) {
        return counter("fulcrum.upstream.attempts", "Attempts of requests on a replica, by outcome", model, replica,
                "outcome", outcome);
    }

    void retried(String model, Replica replica) {
        retriedCounter(model, replica).increment();
    }

    private Counter retriedCounter(String model, Replica replica) {
        return counter("fulcrum.upstream.retries", "Requests sent to another replica after this one failed", model,
                replica, null, null);
    }

    void ejected(String model, Replica replica, String reason) {
        counter("fulcrum.upstream.ejections", "Replicas ejected after consecutive failures, by the last one's kind",
                model, replica, "reason", reason).increment();
    }

    void restored(String model, Replica replica) {
        restoredCounter(model, replica).increment();
    }

    private Counter restoredCounter(String model, Replica replica) {
        return counter("fulcrum.upstream.restorations",
                "Ejected replicas that answered a probe and take requests again", model, replica, null, null);
    }

    /**
     * A LoRA adapter's load or unload on the replica: {@code loaded}, {@code failed}, {@code unloaded},
     * {@code unload_failed}.
     */
    void adapter(String model, Replica replica, String outcome) {
        adapterCounter(model, replica, outcome).increment();
    }

    private Counter adapterCounter(String model, Replica replica, String outcome) {
        return counter("fulcrum.upstream.adapter.loads", "LoRA adapter loads and unloads on a replica, by outcome",
                model, replica, "outcome", outcome);
    }

    private Counter counter(String name, String description, String model, Replica replica, String tag, String value) {
        String key = name + '\n' + model + '\n' + replica.name + '\n' + value;
        Counter counter = counters.get(key);
        if (counter != null) {
            return counter;
        }
        return counters.computeIfAbsent(key, k -> {
            Tags tags = tags(model, replica);
            return Counter.builder(name).description(description).tags(tag == null ? tags : tags.and(tag, value))
                    .register(registry);
        });
    }

    private static Tags tags(String model, Replica replica) {
        return Tags.of("model", model, "replica", replica.name);
    }
}
