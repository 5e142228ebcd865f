package dev.fulcrum.accounts;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;

import com.github.benmanes.caffeine.cache.Cache;

import io.agroal.api.AgroalDataSource;
import io.micrometer.core.instrument.MeterRegistry;

import dev.fulcrum.platform.Caches;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Creates, lists, revokes and checks API keys. Keys are 32 random bytes ({@code fk_} and 64 hex digits); only their
 * SHA-256 is kept.
 */
@Singleton
public class ApiKeys {

    private static final HexFormat HEX = HexFormat.of();

    /** One digest per thread (digest() resets it), so a request does not look the algorithm up again. */
    private static final ThreadLocal<MessageDigest> SHA_256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    });

    public static final String PREFIX = "fk_";
    private static final long LAST_USED_RESOLUTION_MS = 60_000;
    private static final int NAME_MAX = 128;

    private final SecureRandom random = new SecureRandom();
    /** When this replica last recorded a key's use, so that authentication is not a write per request. */
    private final Map<Long, Long> lastRecorded = new ConcurrentHashMap<>();

    @Inject
    AgroalDataSource dataSource;

    @Inject
    AccessChanges changes;

    /** A checked key and the access generation it was checked at. */
    private record Checked(Caller caller, long stamp) {
    }

    private static final int MAX_CHECKED = 100_000;
    private Cache<String, Checked> checked;

    @Inject
    void caches(MeterRegistry registry) {
        checked = Caches.bounded(registry, "api_keys", MAX_CHECKED);
    }

    /** Writes the last use of keys answered from memory; one thread, as they are rare (once a minute per key). */
    private final Executor touches = Executors.newSingleThreadExecutor(task -> {
        Thread thread = new Thread(task, "api-key-uses");
        thread.setDaemon(true);
        return thread;
    });

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
        // hex: letters and digits only, as the wandb SDK accepts a key (it splits at a '-' and wants 40+ characters of
        // [A-Za-z0-9_] after it, which half of all base64url keys broke)
        String secret = PREFIX + HexFormat.of().formatHex(bytes);
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
            key.revokedAt = OffsetDateTime.now(); // every replica drops the key when this commits (AccessChanges)
        }
        return key;
    }

    /**
     * The user a secret belongs to, unless the key is unknown or revoked. Every request of every interface runs this: a
     * key checked before is answered from memory while no access change has arrived since ({@link AccessChanges});
     * otherwise it is one plain query on a pooled connection, outside any transaction. Refusals are not remembered.
     */
    public Optional<Caller> authenticate(String secret) {
        return authenticateHash(hash(secret));
    }

    /** {@link #authenticate(String)} for the SHA-256 of a secret. */
    public Optional<Caller> authenticateHash(String keyHash) {
        Caller known = rememberedHash(keyHash);
        if (known != null) {
            return Optional.of(known);
        }
        long stamp = changes.stamp(); // read before the check: a change committed after it moves the generation
        try {
            return NativeSql.pooled(dataSource, connection -> {
                Optional<Caller> caller = KeyStatements.caller(connection, keyHash);
                if (caller.isPresent()) {
                    recordUse(connection, caller.get().apiKeyId());
                    remember(keyHash, caller.get(), stamp);
                }
                return caller;
            });
        } catch (SQLException e) {
            throw ApiException.unavailable("Database unavailable");
        }
    }

    /**
     * The caller of an {@code Authorization} header (as {@link Authentication} reads it) whose key was checked since
     * the last access change, or null: no I/O, for a door on the event loop that sends every other request the blocking
     * way, where {@link #authenticate(String)} decides.
     */
    public Caller remembered(String authorization) {
        return Authentication.secret(authorization).map(secret -> rememberedHash(hash(secret))).orElse(null);
    }

    /** The caller of a key checked since the last access change (its use noted), or null. */
    private Caller rememberedHash(String keyHash) {
        Checked known = checked.getIfPresent(keyHash);
        if (known == null || !changes.unchanged(known.stamp())) {
            return null;
        }
        noteUse(known.caller().apiKeyId());
        return known.caller();
    }

    /** Keeps a key checked by another statement (the dataset read checks it in its own), under the same rules. */
    public void remember(String keyHash, Caller caller, long stamp) {
        if (stamp == AccessChanges.UNTRUSTED) {
            return;
        }
        checked.put(keyHash, new Checked(caller, stamp));
    }

    /**
     * Notes a use of a key answered from memory: when one is due (at most once a minute), written off the request's
     * thread, so that a cached request makes no round trip of its own.
     */
    public void noteUse(long keyId) {
        if (due(keyId)) {
            touches.execute(() -> {
                try {
                    NativeSql.pooled(dataSource, connection -> {
                        KeyStatements.touch(connection, keyId);
                        return null;
                    });
                } catch (SQLException e) {
                    lastRecorded.remove(keyId); // tried again with the next use
                }
            });
        }
    }

    /** Notes that a key was used, on the connection that checked it. */
    public void recordUse(Connection connection, long keyId) throws SQLException {
        if (due(keyId)) {
            KeyStatements.touch(connection, keyId);
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
        return HEX.formatHex(SHA_256.get().digest(secret.getBytes(StandardCharsets.UTF_8)));
    }
}
