package dev.fulcrum.datasets;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.context.ApplicationScoped;

/**
 * Answers of the dataset read, kept per replica with the access epoch they were read at (the counter of table
 * {@code access_epoch}, which every commit that changes users, entities, memberships, projects or dataset versions
 * moves on). An answer is reused only when the epoch read together with the caller's API key check is still the same:
 * then nothing it depends on has changed in any replica, and the key itself was checked just now, so a revoked key or a
 * removed member is refused at once. Keyed by the API key's hash and the path as requested, so an answer is only ever
 * given again to the caller it was authorized for. Bounded: when full, it starts over.
 */
@ApplicationScoped
public class DatasetReadCache {

    static final int MAX_ANSWERS = 10_000;

    /** A read as requested: the caller's key hash and the path parameters. */
    record Key(String keyHash, String entity, String project, String objectId, String digest) {
    }

    /** The serialized answer and the epoch it was read at. */
    record Answer(long epoch, byte[] body) {
    }

    private final Map<Key, Answer> answers = new ConcurrentHashMap<>();
    private volatile long newestEpoch;

    Answer get(Key key) {
        return answers.get(key);
    }

    /** Keeps an answer read at {@code epoch}; answers of older epochs can never be used again and are dropped. */
    void put(Key key, long epoch, byte[] body) {
        if (epoch > newestEpoch) {
            synchronized (this) {
                if (epoch > newestEpoch) {
                    newestEpoch = epoch;
                    answers.clear();
                }
            }
        }
        if (epoch < newestEpoch) {
            return;
        }
        if (answers.size() >= MAX_ANSWERS) {
            answers.clear();
        }
        answers.put(key, new Answer(epoch, body));
    }

    /** Forgets an answer found out of date. */
    void remove(Key key, Answer answer) {
        answers.remove(key, answer);
    }
}
