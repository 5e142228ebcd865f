package dev.fulcrum.platform;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import com.github.benmanes.caffeine.cache.Weigher;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.cache.CaffeineCacheMetrics;

/**
 * The one way a replica keeps answers in memory: Caffeine caches bounded by a number of entries or by a weight (bytes),
 * evicting what is least likely to be used again (W-TinyLFU) rather than starting over when full, each reported as
 * {@code cache_gets_total{cache, result="hit"|"miss"}}, {@code cache_evictions_total}, {@code cache_puts_total} and
 * {@code cache_size} with its name as the {@code cache} label ({@code docs/operations.md}).
 */
public final class Caches {

    private Caches() {
    }

    /** A cache of at most {@code maxEntries} entries, reported as {@code name}. */
    public static <K, V> Cache<K, V> bounded(MeterRegistry registry, String name, long maxEntries) {
        return CaffeineCacheMetrics.monitor(registry,
                Caffeine.newBuilder().maximumSize(maxEntries).recordStats().<K, V> build(), name);
    }

    /**
     * A cache whose entries weigh at most {@code maxWeight} together ({@code weigher}'s unit), reported as
     * {@code name}.
     */
    public static <K, V> Cache<K, V> weighed(MeterRegistry registry, String name, long maxWeight,
            Weigher<? super K, ? super V> weigher) {
        return CaffeineCacheMetrics.monitor(registry,
                Caffeine.newBuilder().maximumWeight(maxWeight).weigher(weigher).recordStats().<K, V> build(), name);
    }
}
