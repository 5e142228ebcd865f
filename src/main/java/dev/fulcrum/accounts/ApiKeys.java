package dev.fulcrum.accounts;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import io.agroal.api.AgroalDataSource;

import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;

/** Creates, lists, revokes and checks API keys. Keys are 32 random bytes; only their SHA-256 is kept. */
@ApplicationScoped
public class ApiKeys {

    public static final String PREFIX = "fk_";
    private static final long LAST_USED_RESOLUTION_MS = 60_000;
    private static final int NAME_MAX = 128;

    private final SecureRandom random = new SecureRandom();
    /** When this replica last recorded a key's use, so that authentication is not a write per request. */
    private final Map<Long, Long> lastRecorded = new ConcurrentHashMap<>();

    @Inject
    AgroalDataSource dataSource;

    @Inject
    Event<ApiKeyRevoked> revoked;

    /** A new key and its secret, which is shown once and never stored. */
    public record Created(ApiKey key, String secret) {
    }

    @Transactional
    public Created create(long userId, String name) {
        if (name == null || name.isBlank() || name.length() > NAME_MAX) {
            throw ApiException.invalid(
                    Violation.of("Must be 1 to " + NAME_MAX + " characters, not blank", "value_error", "body", "name"));
        }
        byte[] bytes = new byte[32];
        random.nextBytes(bytes);
        String secret = PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        return new Created(store(userId, name, secret), secret);
    }

    /** A new key for the user of that name (issued by a server administrator); 404 for an unknown user. */
    @Transactional
    public Created createFor(String username, String name) {
        User user = User.findByUsername(username);
        if (user == null) {
            throw ApiException.notFound("User " + username + " not found");
        }
        return create(user.id, name);
    }

    /** Stores a key whose secret the caller chose (the bootstrap administrator's). */
    @Transactional
    public ApiKey store(long userId, String name, String secret) {
        ApiKey key = new ApiKey();
        key.userId = userId;
        key.name = name;
        key.keyHash = hash(secret);
        key.prefix = secret.substring(0, Math.min(8, secret.length()));
        key.persist();
        return key;
    }

    @Transactional
    public List<ApiKey> list(long userId) {
        return ApiKey.list("userId = ?1 order by id", userId);
    }

    @Transactional
    public ApiKey revoke(long userId, long keyId) {
        ApiKey key = ApiKey.findById(keyId);
        if (key == null || key.userId != userId) {
            throw ApiException.notFound("API key " + keyId + " not found");
        }
        if (key.revokedAt == null) {
            key.revokedAt = OffsetDateTime.now();
            revoked.fire(new ApiKeyRevoked(key.keyHash));
        }
        return key;
    }

    /**
     * The user a secret belongs to, unless the key is unknown or revoked. Every request of every interface runs this,
     * so it is one plain query on a pooled connection, outside any transaction.
     */
    public Optional<Caller> authenticate(String secret) {
        try (Connection connection = dataSource.getConnection()) {
            Optional<Caller> caller = KeyCheck.caller(connection, hash(secret));
            if (caller.isPresent()) {
                recordUse(connection, caller.get().apiKeyId());
            }
            return caller;
        } catch (SQLException e) {
            throw ApiException.unavailable("Database unavailable");
        }
    }

    /** Notes that a key was used, on the connection that checked it. */
    public void recordUse(Connection connection, long keyId) throws SQLException {
        if (due(keyId)) {
            KeyCheck.touch(connection, keyId);
        }
    }

    /** Whether this replica should record a use of the key: at most once a minute, not a write per request. */
    private boolean due(long keyId) {
        long now = System.currentTimeMillis();
        Long last = lastRecorded.get(keyId);
        if (last != null && now - last < LAST_USED_RESOLUTION_MS) {
            return false;
        }
        lastRecorded.put(keyId, now);
        return true;
    }

    public static ApiException invalidKey() {
        return ApiException.unauthorized("Invalid or revoked API key");
    }

    public static String hash(String secret) {
        try {
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(sha256.digest(secret.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
