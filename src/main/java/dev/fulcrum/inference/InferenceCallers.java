package dev.fulcrum.inference;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.TransactionPhase;
import jakarta.inject.Inject;
import jakarta.persistence.PersistenceException;

import io.vertx.core.Future;
import io.vertx.core.Vertx;

import dev.fulcrum.accounts.AccessEpoch;
import dev.fulcrum.accounts.ApiKeyRevoked;
import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.accounts.Role;

/**
 * Who calls the chat completions and for which project, without blocking the event loop: a checked key and project
 * header are remembered on this replica together with the access epoch they were checked at, and reused only while the
 * epoch has not moved (and for at most {@code fulcrum.inference.auth-cache-ttl}; with
 * {@code fulcrum.inference.immediate-revocation=false}, for the TTL alone). The epoch moves on with every commit that
 * revokes a key or changes users, memberships or projects, through any replica, and {@link AccessEpoch} reads it fresh
 * for every request (one shared read serves all requests that arrived during the previous one), so a key revoked or a
 * member removed through another replica is refused on the very next request. A miss is checked on a worker thread (the
 * same key query as every other interface, then the membership). Failures are never remembered, so a new membership
 * counts at once.
 */
@ApplicationScoped
public class InferenceCallers {

    static final String DEFAULT_PROJECT = "inference";
    private static final int MAX_CACHED = 100_000;

    @Inject
    ApiKeys apiKeys;

    @Inject
    InferenceStatements statements;

    @Inject
    InferenceConfig config;

    @Inject
    Vertx vertx;

    @Inject
    AccessEpoch epoch;

    private record Remembered(InferenceCaller caller, long epoch, long expiresNanos) {
    }

    private final Map<String, Remembered> remembered = new ConcurrentHashMap<>();

    /** The caller, or a failed future holding an {@link InferenceFailure} (401, 403, 404, 400). */
    public Future<InferenceCaller> resolve(String authorization, String projectHeader) {
        String secret = bearer(authorization);
        if (secret == null) {
            return Future.failedFuture(InferenceFailure.unauthorized());
        }
        String header = projectHeader == null ? "" : projectHeader.strip();
        String key = ApiKeys.hash(secret) + "\n" + header;
        Future<Long> epochNow = config.immediateRevocation()
                ? epoch.current().recover(unavailable -> Future.failedFuture(databaseUnavailable()))
                : Future.succeededFuture(0L); // trusted for the TTL alone
        return epochNow.compose(current -> {
            Remembered known = remembered.get(key);
            if (known != null && known.epoch() == current && System.nanoTime() - known.expiresNanos() < 0) {
                return Future.succeededFuture(known.caller());
            }
            // checked after the epoch was read: an answer stamped with it is at least that new
            return vertx.executeBlocking(() -> check(secret, header), false).onSuccess(caller -> {
                if (remembered.size() >= MAX_CACHED) {
                    remembered.clear();
                }
                remembered.put(key,
                        new Remembered(caller, current, System.nanoTime() + config.authCacheTtl().toNanos()));
            });
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

    private static InferenceFailure databaseUnavailable() {
        return new InferenceFailure(503, "Database unavailable", null, null, null);
    }

    void forget(@Observes(during = TransactionPhase.AFTER_SUCCESS) ApiKeyRevoked revoked) {
        String prefix = revoked.keyHash() + "\n";
        remembered.keySet().removeIf(key -> key.startsWith(prefix));
    }

    private InferenceCaller check(String secret, String header) {
        return check(apiKeys.authenticate(secret).orElseThrow(InferenceFailure::unauthorized), header);
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
        InferenceStatements.Team team;
        try {
            team = statements.team(caller.userId(), entity)
                    .orElseThrow(() -> InferenceFailure.notFound("Team " + entity + " not found"));
        } catch (PersistenceException e) {
            throw new InferenceFailure(503, "Database unavailable", null, null, null);
        }
        boolean member = team.role() != null && Role.valueOf(team.role()).atLeast(Role.MEMBER);
        if (!caller.admin() && !team.own() && !member) {
            throw InferenceFailure.forbidden("You are not a member of " + entity
                    + " (completions are counted for projects of teams you are a member of)");
        }
        return new InferenceCaller(caller, entity, project);
    }

    private static String bearer(String authorization) {
        if (authorization == null || authorization.length() < 8
                || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return null;
        }
        String secret = authorization.substring(7).strip();
        return secret.isEmpty() ? null : secret;
    }
}
