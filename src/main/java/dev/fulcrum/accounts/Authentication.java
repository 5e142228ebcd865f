package dev.fulcrum.accounts;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.inject.Inject;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.HttpHeaders;

import org.jboss.resteasy.reactive.server.ServerRequestFilter;

import dev.fulcrum.platform.errors.ApiException;

/**
 * Every endpoint of every interface needs an API key: {@code Authorization: Bearer <key>}, or HTTP Basic with the key
 * as password and any user name, checked by {@link ApiKeys} (from memory while no access change has arrived, see
 * {@link AccessChanges}). Runs on the thread of the resource method, so a first lookup may block. Methods marked
 * {@link AuthenticatesWithSignedToken} verify a server-signed token themselves; methods marked {@link AcceptsAnonymous}
 * keep nothing and need no credentials. The web console's pages (classes marked {@link AuthenticatesWithSession}) use
 * its session cookie instead.
 */
public class Authentication {

    /** The header of clients whose SDK sends the key there ({@link AcceptsApiKeyHeader}). */
    static final String API_KEY_HEADER = "X-API-Key";
    private static final Map<Method, Boolean> SIGNED_TOKEN = new ConcurrentHashMap<>();
    private static final Map<Method, Boolean> ANONYMOUS = new ConcurrentHashMap<>();

    @Inject
    ApiKeys apiKeys;

    @Inject
    CurrentCaller current;

    @ServerRequestFilter(priority = Priorities.AUTHENTICATION)
    public void authenticate(ContainerRequestContext request, ResourceInfo resource) {
        if (resource.getResourceClass() != null
                && resource.getResourceClass().isAnnotationPresent(AuthenticatesWithSession.class)) {
            return;
        }
        Method method = resource.getResourceMethod();
        if (method != null && ANONYMOUS.computeIfAbsent(method, m -> m.isAnnotationPresent(AcceptsAnonymous.class))) {
            return;
        }
        String authorization = request.getHeaderString(HttpHeaders.AUTHORIZATION);
        AcceptsApiKeyHeader header = resource.getResourceClass() == null ? null
                : resource.getResourceClass().getAnnotation(AcceptsApiKeyHeader.class);
        if (header != null && authorization == null) {
            String key = request.getHeaderString(API_KEY_HEADER);
            if (key == null || key.isBlank()) {
                throw ApiException.unauthorized("Missing credentials: send X-API-Key: " + header.prefix()
                        + "<API key> (or Authorization: Bearer <API key>)");
            }
            if (!key.startsWith(header.prefix())) {
                throw ApiException
                        .unauthorized("The X-API-Key must be " + header.prefix() + " followed by a Fulcrum API key");
            }
            current.set(apiKeys.authenticate(key.substring(header.prefix().length()).strip())
                    .orElseThrow(ApiKeys::invalidKey));
            return;
        }
        String secret = secret(authorization).orElseThrow(
                () -> ApiException.unauthorized("Missing credentials: send Authorization: Bearer <API key>"));
        if (authenticatesWithSignedToken(resource)) {
            return;
        }
        current.set(apiKeys.authenticate(secret).orElseThrow(ApiKeys::invalidKey));
    }

    /** Whether the matched method verifies a signed token itself; remembered per method, as reflection is slow. */
    private static boolean authenticatesWithSignedToken(ResourceInfo resource) {
        Method method = resource.getResourceMethod();
        return method != null
                && SIGNED_TOKEN.computeIfAbsent(method, m -> m.isAnnotationPresent(AuthenticatesWithSignedToken.class));
    }

    /**
     * The token of an {@code Authorization: Bearer <token>} header (the scheme in any case), or empty for another
     * scheme, no header or an empty token: the one reading of the header, for API keys, job tokens and the chat
     * completions alike.
     */
    public static Optional<String> bearer(String authorization) {
        if (authorization == null || authorization.length() < 7
                || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            return Optional.empty();
        }
        String token = authorization.substring(7).strip();
        return token.isEmpty() ? Optional.empty() : Optional.of(token);
    }

    static Optional<String> secret(String authorization) {
        if (authorization == null) {
            return Optional.empty();
        }
        int space = authorization.indexOf(' ');
        if (space < 0) {
            return Optional.empty();
        }
        String scheme = authorization.substring(0, space);
        String credentials = authorization.substring(space + 1).trim();
        if (scheme.equalsIgnoreCase("Bearer")) {
            return bearer(authorization);
        }
        if (scheme.equalsIgnoreCase("Basic")) {
            try {
                String decoded = new String(Base64.getDecoder().decode(credentials), StandardCharsets.UTF_8);
                int colon = decoded.indexOf(':');
                String password = colon < 0 ? "" : decoded.substring(colon + 1);
                return password.isEmpty() ? Optional.empty() : Optional.of(password);
            } catch (IllegalArgumentException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }
}
