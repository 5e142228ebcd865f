package dev.fulcrum.inference.engine.upstream;

import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import dev.fulcrum.inference.InferenceFailure.ServerFault;

/**
 * The replicas one request tries, whichever way it is sent ({@link RoutedBackend}'s exchanges, {@link UpstreamTokens}'
 * blocking calls): the first as the model's routing chooses it; after a failed attempt, the same replica again once
 * with its adapter loaded anew (it answered 404 for an adapter it held: it restarted and lost it), else another replica
 * for a fault worth retrying, at most {@code retries} times and before the model's timeout, else none.
 */
final class Attempts {

    /** The next attempt: on {@code replica}, whose adapter was forgotten to be loaded again when {@code reload}. */
    record Next(Replica replica, boolean reload) {
    }

    private final Replicas replicas;
    private final String key;
    private final String adapter;
    private final boolean hasFallback;
    private final int retries;
    private final long deadline;
    /** The replicas this request failed on, and those it reloaded its adapter on (made at the first). */
    private Set<Replica> tried = Set.of();
    private Set<Replica> reloaded = Set.of();
    private int retried;

    /**
     * {@code key}: the request's prefix key (prefix affinity), or null; {@code adapter}: its LoRA adapter's name, or
     * null; {@code hasFallback}: whether the request has a fallback model to go to when no replica can take it.
     */
    Attempts(Replicas replicas, String key, String adapter, boolean hasFallback, int retries) {
        this.replicas = replicas;
        this.key = key;
        this.adapter = adapter;
        this.hasFallback = hasFallback;
        this.retries = retries;
        this.deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(replicas.model().timeoutMs());
    }

    /** The first attempt's replica, or null when none may take the request. */
    Replica first() {
        return replicas.choose(key, adapter, tried, hasFallback);
    }

    /**
     * The attempt that follows one on {@code failed} that failed with {@code fault} (null: the request's own fault,
     * never retried), or null when there is none.
     */
    Next after(Replica failed, ServerFault fault) {
        if (fault == null) {
            return null;
        }
        if (adapter != null && fault.reason() == ServerFault.Reason.ANSWERED && fault.status() == 404
                && failed.hasAdapter(adapter) && !reloaded.contains(failed)) {
            reloaded = new HashSet<>(reloaded);
            reloaded.add(failed);
            failed.forget(adapter);
            return new Next(failed, true);
        }
        if (!fault.retryable() || retried >= retries || System.nanoTime() >= deadline) {
            return null;
        }
        tried = new HashSet<>(tried);
        tried.add(failed);
        Replica next = replicas.choose(key, adapter, tried, hasFallback);
        if (next == null) {
            return null;
        }
        retried++;
        return new Next(next, false);
    }
}
