package dev.fulcrum.inference.engine.upstream;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

/**
 * Consistent hashing over a model's replicas ({@value #POINTS_PER_WEIGHT} points on the ring per unit of weight), with
 * bounded loads (Mirrokni, Thorup and Zadimoghaddam, 2018): a key goes to the first replica clockwise from its hash
 * that may take it and whose load stays within {@code bound} times its weighted share of all of them (or below one).
 * The load is the requests under way averaged over about a second ({@link Replica#smoothedLoad}): the moment-to-moment
 * swings of a few dozen conversations would otherwise move turns between replicas, while a key that stays hot still
 * spills over. Keys move only when their replica leaves or is full, so every gateway replica sends a key to the same
 * model server replica without sharing any state.
 */
final class Ring {

    static final int POINTS_PER_WEIGHT = 160;

    private final long[] points;
    private final Replica[] owners;

    Ring(List<Replica> replicas) {
        int size = replicas.stream().mapToInt(r -> r.weight * POINTS_PER_WEIGHT).sum();
        long[] hashes = new long[size];
        Replica[] byHash = new Replica[size];
        int i = 0;
        for (Replica replica : replicas) {
            for (int point = 0; point < replica.weight * POINTS_PER_WEIGHT; point++) {
                hashes[i] = hash(replica.name + "#" + point);
                byHash[i] = replica;
                i++;
            }
        }
        Integer[] order = new Integer[size];
        for (int j = 0; j < size; j++) {
            order[j] = j;
        }
        Arrays.sort(order, (a, b) -> Long.compare(hashes[a], hashes[b]));
        points = new long[size];
        owners = new Replica[size];
        for (int j = 0; j < size; j++) {
            points[j] = hashes[order[j]];
            owners[j] = byHash[order[j]];
        }
    }

    /**
     * Where a key is placed: the first replica clockwise from {@code hash} that {@code allowed} lets take it and whose
     * requests under way, this one included, stay within {@code bound} times its weighted share of all candidates'
     * (plus this one); null when none does.
     */
    Replica place(long hash, List<Replica> candidates, double bound, Predicate<Replica> allowed) {
        int total = 0;
        int weights = 0;
        for (Replica candidate : candidates) {
            total += candidate.inFlight();
            weights += candidate.weight;
        }
        int start = start(hash);
        for (int step = 0; step < points.length; step++) {
            Replica owner = owners[(start + step) % points.length];
            if (allowed.test(owner) && candidates.contains(owner)
                    && owner.inFlight() + 1 <= Math.ceil(bound * (total + 1) * owner.weight / weights)) {
                return owner;
            }
        }
        return null;
    }

    /**
     * Whether {@code replica} may keep the keys it has: its load averaged over about a second stays within
     * {@code bound} times its weighted share of all candidates' (or below one request).
     */
    static boolean keeps(Replica replica, List<Replica> candidates, double bound) {
        double total = 0;
        int weights = 0;
        for (Replica candidate : candidates) {
            total += candidate.smoothedLoad();
            weights += candidate.weight;
        }
        return replica.smoothedLoad() <= Math.max(1, bound * total * replica.weight / weights);
    }

    private int start(long hash) {
        int start = Arrays.binarySearch(points, hash);
        return start >= 0 ? start : -start - 1;
    }

    /** 64-bit FNV-1a over the UTF-8 bytes, mixed (SplitMix64's finalizer): the same on every gateway replica. */
    static long hash(String text) {
        long h = 0xcbf29ce484222325L;
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        h ^= h >>> 30;
        h *= 0xbf58476d1ce4e5b9L;
        h ^= h >>> 27;
        h *= 0x94d049bb133111ebL;
        return h ^ (h >>> 31);
    }
}
