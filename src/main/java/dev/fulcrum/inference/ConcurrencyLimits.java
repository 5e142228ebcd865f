package dev.fulcrum.inference;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * Requests running per project on this replica, at most {@code fulcrum.inference.max-concurrent-requests-per-project}
 * (so with N replicas a project may run up to N times that). Counted in memory: no database round trip per request.
 */
@ApplicationScoped
public class ConcurrencyLimits {

    @Inject
    InferenceConfig config;

    private final Map<String, AtomicInteger> running = new ConcurrentHashMap<>();

    /** Takes a slot for the project, or fails with 429. */
    public void acquire(String entity, String project) {
        AtomicInteger count = running.computeIfAbsent(entity + "/" + project, k -> new AtomicInteger());
        if (count.incrementAndGet() > config.maxConcurrentRequestsPerProject()) {
            count.decrementAndGet();
            throw InferenceFailure.concurrencyLimit();
        }
    }

    public void release(String entity, String project) {
        AtomicInteger count = running.get(entity + "/" + project);
        if (count != null) {
            count.decrementAndGet();
        }
    }
}
