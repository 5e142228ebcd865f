package dev.fulcrum.accounts;

import java.net.URI;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.jwt.JsonWebToken;

import io.agroal.api.AgroalDataSource;

import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Sessions of the web console, the console's way of saying who the caller is (the API's is the key, see
 * {@link Authentication}). Signing in checks an API key once and answers a token signed with the server's JWT key
 * ({@link JwtTokens}) that the browser keeps in an HttpOnly cookie; the key itself is not kept anywhere. The token
 * names a row of {@code console_sessions} by a random id (stored hashed), so that signing out, revoking the key or
 * deleting the user ends the session at once, and carries nothing else the server trusts.
 */
@ApplicationScoped
public class ConsoleSessions {

    /** The session cookie. */
    public static final String COOKIE = "fulcrum_console";
    /** The header that carries a session's CSRF token from the console's scripts (forms carry it as a field). */
    public static final String CSRF_HEADER = "X-CSRF-Token";
    private static final String SCOPE = "console";
    private static final SecureRandom RANDOM = new SecureRandom();

    @Inject
    AgroalDataSource dataSource;

    @Inject
    ApiKeys apiKeys;

    @Inject
    JwtTokens tokens;

    @Inject
    FulcrumConfig config;

    @Inject
    CurrentCaller current;

    /** A signed-in session: who, and the token its forms must carry (CSRF). */
    public record Session(Caller caller, String csrf, String idHash) {
    }

    /** The cookie value of a new session, unless the key is unknown or revoked. */
    public Optional<String> signIn(String apiKey) {
        Optional<Caller> caller = apiKey == null || apiKey.isBlank() ? Optional.empty()
                : apiKeys.authenticate(apiKey.strip());
        if (caller.isEmpty()) {
            return Optional.empty();
        }
        String id = random();
        try {
            NativeSql.pooled(dataSource, connection -> {
                SessionStatements.insert(connection, ApiKeys.hash(id), caller.get().apiKeyId(), random(),
                        lifetime().toSeconds());
                return null;
            });
        } catch (SQLException e) {
            throw ApiException.unavailable("Database unavailable");
        }
        return Optional.of(tokens.sign(caller.get().username(), Map.of("scope", SCOPE, "sid", id), lifetime()));
    }

    /** Makes the session's user the caller of this request (the console's pages then call the API's services). */
    public void enter(Session session) {
        current.authenticated(session.caller());
    }

    /** The session a cookie names, while it is signed by this server, unexpired, not signed out and its key valid. */
    public Optional<Session> resolve(String cookie) {
        if (cookie == null || cookie.isBlank()) {
            return Optional.empty();
        }
        JsonWebToken token;
        try {
            token = tokens.verify(cookie);
        } catch (ApiException invalid) {
            return Optional.empty();
        }
        Object sid = token.getClaim("sid");
        if (!SCOPE.equals(String.valueOf((Object) token.getClaim("scope"))) || sid == null) {
            return Optional.empty();
        }
        String idHash = ApiKeys.hash(String.valueOf(sid));
        try {
            return NativeSql.pooled(dataSource, connection -> {
                Optional<Session> session = SessionStatements.find(connection, idHash);
                if (session.isPresent()) {
                    apiKeys.recordUse(connection, session.get().caller().apiKeyId());
                }
                return session;
            });
        } catch (SQLException e) {
            throw ApiException.unavailable("Database unavailable");
        }
    }

    /** Ends a session: its cookie is refused from now on. */
    public void signOut(Session session) {
        try {
            NativeSql.pooled(dataSource, connection -> {
                SessionStatements.delete(connection, session.idHash());
                return null;
            });
        } catch (SQLException e) {
            throw ApiException.unavailable("Database unavailable");
        }
    }

    public Duration lifetime() {
        return config.console().sessionLifetime();
    }

    /**
     * Whether a state-changing request came from this console: browsers send {@code Origin} on every POST, and when it
     * is there it must name this server. Host and port only: behind a proxy that ends TLS the scheme seen here differs
     * from the browser's.
     */
    public static boolean sameOrigin(String origin, String host) {
        if (origin == null) {
            return true;
        }
        try {
            URI from = URI.create(origin);
            return host != null && from.getRawAuthority() != null && from.getRawAuthority().equalsIgnoreCase(host);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Whether a form's token is the session's, compared in constant time. */
    public static boolean csrfMatches(Session session, String presented) {
        return presented != null
                && MessageDigest.isEqual(session.csrf().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        presented.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static String random() {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
