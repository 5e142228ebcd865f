package dev.fulcrum.datasets;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.github.benmanes.caffeine.cache.Cache;

import io.micrometer.core.instrument.MeterRegistry;

import dev.fulcrum.accounts.AccessChanges;
import dev.fulcrum.platform.Caches;

/**
 * Answers of the dataset read, kept per replica with the access generation they were read at ({@link AccessChanges}:
 * every commit that changes users, keys, entities, memberships, projects or dataset versions, through any replica,
 * moves it on). An answer is reused only while the generation has not moved: then nothing it depends on has changed,
 * the key included, so a revoked key or a removed member is refused at once on the replica that made the change and
 * within milliseconds on the others. Keyed by the user and the path as requested, so an answer is only ever given again
 * to the user it was authorized for. Bounded by the bytes of its answers ({@link Caches}): when full, the answers least
 * likely to be read again go first.
 */
@ApplicationScoped
public class DatasetReadCache {

    /** The bytes of answers kept together (their serialized bodies). */
    static final long MAX_BYTES = 64L << 20;

    /** A read as requested: the caller and the path parameters. */
    record Key(long userId, String entity, String project, String objectId, String digest) {
    }

    /** The serialized answer and the generation it was read at. */
    record Answer(long stamp, byte[] body) {
    }

    private Cache<Key, Answer> answers;

    @Inject
    void caches(MeterRegistry registry) {
        answers = Caches.weighed(registry, "dataset_reads", MAX_BYTES, (key, answer) -> answer.body().length);
    }

    private volatile long newestStamp;

    Answer get(Key key) {
        return answers.getIfPresent(key);
    }

    /** Keeps an answer read at {@code stamp}; answers of older generations can never be used again and are dropped. */
    void put(Key key, long stamp, byte[] body) {
        if (stamp == AccessChanges.UNTRUSTED) {
            return;
        }
        if (stamp > newestStamp) {
            synchronized (this) {
                if (stamp > newestStamp) {
                    newestStamp = stamp;
                    answers.invalidateAll();
                }
            }
        }
        if (stamp < newestStamp) {
            return;
        }
        answers.put(key, new Answer(stamp, body));
    }

    /** Forgets an answer found out of date. */
    void remove(Key key, Answer answer) {
        answers.asMap().remove(key, answer);
    }
}
