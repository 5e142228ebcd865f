package dev.fulcrum.inference.gateway;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.persistence.PersistenceException;

import com.github.benmanes.caffeine.cache.Cache;

import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.AccessChanges;
import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.accounts.Authentication;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.inference.InferenceCaller;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Kind;
import dev.fulcrum.platform.Caches;

/**
 * Who calls the chat completions and for which project, without blocking the event loop: a checked key and project
 * header are remembered on this replica and reused while no access change has arrived since they were checked (see
 * {@link AccessChanges}: every commit that revokes a key or changes users, memberships or projects, through any
 * replica, drops them). So a remembered caller costs no database round trip, however long it is reused; a miss is
 * checked on a worker thread (the same key check as every other interface, then {@link Access}'s rule for the project's
 * entity: at least the member role). While the replica does not hear access changes, nothing is reused. Failures are
 * never remembered, so a new membership counts at once.
 */
@Singleton
public class InferenceCallers {

    static final String DEFAULT_PROJECT = "inference";
    private static final int MAX_CACHED = 100_000;

    @Inject
    ApiKeys apiKeys;

    @Inject
    Access access;

    @Inject
    Vertx vertx;

    @Inject
    AccessChanges changes;

    private record Remembered(InferenceCaller caller, long stamp) {
    }

    private Cache<String, Remembered> remembered;

    @Inject
    void caches(MeterRegistry registry) {
        remembered = Caches.bounded(registry, "inference_callers", MAX_CACHED);
    }

    /** The caller, or a failed future holding an {@link InferenceFailure} (401, 403, 404, 400). */
    public Future<InferenceCaller> resolve(String authorization, String projectHeader) {
        String secret = Authentication.bearer(authorization).orElse(null);
        if (secret == null) {
            return Future.failedFuture(InferenceFailure.unauthorized());
        }
        String header = projectHeader == null ? "" : projectHeader.strip();
        String keyHash = ApiKeys.hash(secret);
        String key = header.isEmpty() ? keyHash : keyHash + "\n" + header;
        Remembered known = remembered.getIfPresent(key);
        if (known != null && changes.unchanged(known.stamp())) {
            apiKeys.noteUse(known.caller().caller().apiKeyId());
            return Future.succeededFuture(known.caller());
        }
        long stamp = changes.stamp(); // read before the check: a change committed after it moves the generation
        return vertx.executeBlocking(() -> check(keyHash, header), false).onSuccess(caller -> {
            if (stamp == AccessChanges.UNTRUSTED) {
                return;
            }
            remembered.put(key, new Remembered(caller, stamp));
        });
    }

    /**
     * The caller of a completion whose user is already known (a console session's, checked by the console's sessions):
     * the same project rules as for a key, checked on a worker thread every time.
     */
    public Future<InferenceCaller> resolve(Caller caller, String projectHeader) {
        String header = projectHeader == null ? "" : projectHeader.strip();
        return vertx.executeBlocking(() -> check(caller, header), false);
    }

    private InferenceCaller check(String keyHash, String header) {
        return check(apiKeys.authenticateHash(keyHash).orElseThrow(InferenceFailure::unauthorized), header);
    }

    private InferenceCaller check(Caller caller, String header) {
        if (header.isEmpty()) {
            return new InferenceCaller(caller, caller.username(), DEFAULT_PROJECT);
        }
        int slash = header.indexOf('/');
        String entity = slash < 0 ? "" : header.substring(0, slash);
        String project = slash < 0 ? "" : header.substring(slash + 1);
        if (!Names.isEntity(entity) || !Names.isProject(project)) {
            throw InferenceFailure.invalid("Compat-Project",
                    "The project header must be 'team/project' (letters, digits, '_', '.', '-')");
        }
        try {
            access.entity(caller, entity, Role.MEMBER); // completions count for projects of the caller's teams
        } catch (ApiException e) {
            throw InferenceFailure.of(e);
        } catch (PersistenceException e) {
            throw new InferenceFailure(Kind.UNAVAILABLE, "Database unavailable", null, null, null);
        }
        return new InferenceCaller(caller, entity, project);
    }
}
