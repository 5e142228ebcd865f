package dev.fulcrum.datasets;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.context.ApplicationScoped;

import dev.fulcrum.accounts.AccessChanges;

/**
 * Answers of the dataset read, kept per replica with the access generation they were read at ({@link AccessChanges}:
 * every commit that changes users, keys, entities, memberships, projects or dataset versions, through any replica,
 * moves it on). An answer is reused only while the generation has not moved: then nothing it depends on has changed,
 * the key included, so a revoked key or a removed member is refused at once on the replica that made the change and
 * within milliseconds on the others. Keyed by the user and the path as requested, so an answer is only ever given again
 * to the user it was authorized for. Bounded: when full, it starts over.
 */
@ApplicationScoped
public class DatasetReadCache {

    static final int MAX_ANSWERS = 10_000;

    /** A read as requested: the caller and the path parameters. */
    record Key(long userId, String entity, String project, String objectId, String digest) {
    }

    /** The serialized answer and the generation it was read at. */
    record Answer(long stamp, byte[] body) {
    }

    private final Map<Key, Answer> answers = new ConcurrentHashMap<>();
    private volatile long newestStamp;

    Answer get(Key key) {
        return answers.get(key);
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
                    answers.clear();
                }
            }
        }
        if (stamp < newestStamp) {
            return;
        }
        if (answers.size() >= MAX_ANSWERS) {
            answers.clear();
        }
        answers.put(key, new Answer(stamp, body));
    }

    /** Forgets an answer found out of date. */
    void remove(Key key, Answer answer) {
        answers.remove(key, answer);
    }
}
