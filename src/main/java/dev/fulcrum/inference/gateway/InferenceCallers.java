package dev.fulcrum.inference.gateway;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.persistence.PersistenceException;

import io.vertx.core.Future;
import io.vertx.core.Vertx;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.accounts.Authentication;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.inference.InferenceCaller;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Kind;

/**
 * Who calls the chat completions and for which project, without blocking the event loop: a key checked since the last
 * access change ({@link ApiKeys#remembered}) and the caller's role on the project's entity looked up since then
 * ({@link Access#rememberedEntity}) are answered from {@code accounts}' memory, so a remembered caller costs no
 * database round trip; a miss is checked on a worker thread (the same key check as every other interface, then
 * {@link Access}'s rule for the entity: at least the member role). Refusals are decided again on every request.
 */
@Singleton
public class InferenceCallers {

    static final String DEFAULT_PROJECT = "inference";

    @Inject
    ApiKeys apiKeys;

    @Inject
    Access access;

    @Inject
    Vertx vertx;

    /** The project a header names; {@code entity} is null for the caller's default project. */
    private record Named(String entity, String project) {
    }

    /**
     * The header that names the project of a request ({@code Compat-Project} or {@code OpenAI-Project}) and its value.
     */
    public record ProjectHeader(String name, String value) {
    }

    /** The caller, or a failed future holding an {@link InferenceFailure} (401, 403, 404, 400). */
    public Future<InferenceCaller> resolve(String authorization, ProjectHeader projectHeader) {
        String secret = Authentication.bearer(authorization).orElse(null);
        if (secret == null) {
            return Future.failedFuture(InferenceFailure.unauthorized());
        }
        Named named;
        try {
            named = named(projectHeader);
        } catch (InferenceFailure e) {
            return Future.failedFuture(e);
        }
        Caller known = apiKeys.remembered(authorization);
        if (known != null) {
            try {
                InferenceCaller caller = remembered(known, named);
                if (caller != null) {
                    return Future.succeededFuture(caller);
                }
            } catch (InferenceFailure e) {
                return Future.failedFuture(e);
            }
        }
        return vertx.executeBlocking(
                () -> check(apiKeys.authenticate(secret).orElseThrow(InferenceFailure::unauthorized), named), false);
    }

    /**
     * The caller of a completion whose user is already known (a console session's, checked by the console's sessions):
     * the same project rules as for a key.
     */
    public Future<InferenceCaller> resolve(Caller caller, ProjectHeader projectHeader) {
        try {
            Named named = named(projectHeader);
            InferenceCaller remembered = remembered(caller, named);
            return remembered != null ? Future.succeededFuture(remembered)
                    : vertx.executeBlocking(() -> check(caller, named), false);
        } catch (InferenceFailure e) {
            return Future.failedFuture(e);
        }
    }

    private static Named named(ProjectHeader projectHeader) {
        String header = projectHeader == null ? "" : projectHeader.value().strip();
        if (header.isEmpty()) {
            return new Named(null, DEFAULT_PROJECT);
        }
        int slash = header.indexOf('/');
        String entity = slash < 0 ? "" : header.substring(0, slash);
        String project = slash < 0 ? "" : header.substring(slash + 1);
        if (!Names.isEntity(entity) || !Names.isProject(project)) {
            throw InferenceFailure.invalid(projectHeader.name(),
                    "Must be 'team/project': a team of 1 to 64 and a project of 1 to 128 letters, digits, '_', '.' or "
                            + "'-', each starting with a letter or digit");
        }
        return new Named(entity, project);
    }

    /**
     * The caller decided from memory, or null when {@code accounts} has not looked the role up since the last change.
     */
    private InferenceCaller remembered(Caller caller, Named named) {
        if (named.entity() == null) {
            return new InferenceCaller(caller, caller.username(), named.project());
        }
        try {
            // completions count for projects of the caller's teams
            return access.rememberedEntity(caller, named.entity(), Role.MEMBER) == null ? null
                    : new InferenceCaller(caller, named.entity(), named.project());
        } catch (ApiException e) {
            throw InferenceFailure.of(e);
        }
    }

    private InferenceCaller check(Caller caller, Named named) {
        if (named.entity() == null) {
            return new InferenceCaller(caller, caller.username(), named.project());
        }
        try {
            access.entity(caller, named.entity(), Role.MEMBER);
        } catch (ApiException e) {
            throw InferenceFailure.of(e);
        } catch (PersistenceException e) {
            throw new InferenceFailure(Kind.UNAVAILABLE, "Database unavailable", null, null, null);
        }
        return new InferenceCaller(caller, named.entity(), named.project());
    }
}
