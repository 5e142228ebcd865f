package dev.fulcrum.automations;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.hibernate.Session;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;
import dev.fulcrum.platform.SecretCipher;

/**
 * Team secrets: named values (tokens, passwords, signing keys) that webhooks and automation payloads reference by name.
 * Values are write-only: sealed with {@link SecretCipher} (bound to the team and the name) and never returned or
 * logged; only {@link #reveal} opens them, for building an outgoing request. Team admins manage them.
 */
@ApplicationScoped
public class TeamSecrets {

    /** Secret names as payloads reference them ({@code $NAME}). */
    public static final Pattern NAME = Pattern.compile("[A-Z_][A-Z0-9_]*");
    static final int MAX_NAME = 128;
    static final int MAX_VALUE_CHARS = 65536;

    @Inject
    TeamScope teams;

    @Inject
    SecretCipher cipher;

    @Inject
    EntityManager em;

    /** A secret as the API shows it: never its value. */
    public record SecretInfo(String name, OffsetDateTime createdAt, OffsetDateTime updatedAt) {
    }

    @Transactional
    public List<SecretInfo> list(String team) {
        long teamId = teams.require(team, Role.ADMIN).id();
        return infos(teamId, null);
    }

    @Transactional
    public SecretInfo create(String team, String name, String value) {
        long teamId = teams.require(team, Role.ADMIN).id();
        requireName(name);
        requireValue(value);
        int inserted = em.createNativeQuery("""
                insert into team_secrets (team_id, name, value) values (?1, ?2, ?3)
                on conflict (team_id, name) do nothing""").setParameter(1, teamId).setParameter(2, name)
                .setParameter(3, cipher.seal(value, context(teamId, name))).executeUpdate();
        if (inserted == 0) {
            throw ApiException.conflict("Team " + team + " already has a secret " + name);
        }
        return infos(teamId, name).get(0);
    }

    /** Replaces the value of an existing secret. */
    @Transactional
    public SecretInfo update(String team, String name, String value) {
        long teamId = teams.require(team, Role.ADMIN).id();
        requireValue(value);
        int updated = em.createNativeQuery("""
                update team_secrets set value = ?3, updated_at = now() where team_id = ?1 and name = ?2""")
                .setParameter(1, teamId).setParameter(2, name)
                .setParameter(3, cipher.seal(value, context(teamId, name))).executeUpdate();
        if (updated == 0) {
            throw notFound(team, name);
        }
        return infos(teamId, name).get(0);
    }

    /** Deletes a secret; 409 while a webhook of the team uses it. */
    @Transactional
    public void delete(String team, String name) {
        long teamId = teams.require(team, Role.ADMIN).id();
        List<?> users = em.createNativeQuery("""
                select name from webhooks where team_id = ?1 and (access_token_secret = ?2 or signing_secret = ?2)
                order by name""").setParameter(1, teamId).setParameter(2, name).getResultList();
        if (!users.isEmpty()) {
            throw ApiException.conflict("Secret " + name + " is used by webhook(s) "
                    + String.join(", ", users.stream().map(String::valueOf).toList()));
        }
        int deleted = em.createNativeQuery("delete from team_secrets where team_id = ?1 and name = ?2")
                .setParameter(1, teamId).setParameter(2, name).executeUpdate();
        if (deleted == 0) {
            throw notFound(team, name);
        }
    }

    /** The names of the team's secrets (for checking what a payload may reference); no permission check. */
    @Transactional
    public Set<String> names(long teamEntityId) {
        List<?> rows = em.createNativeQuery("select name from team_secrets where team_id = ?1 order by name")
                .setParameter(1, teamEntityId).getResultList();
        Set<String> names = new LinkedHashSet<>();
        rows.forEach(name -> names.add((String) name));
        return names;
    }

    /**
     * The values of those of {@code names} that exist in the team, for rendering an outgoing request; absent names are
     * left out of the map. No permission check: never expose the result over HTTP or in logs.
     */
    @Transactional
    public Map<String, String> reveal(long teamEntityId, Collection<String> names) {
        Map<String, String> values = new HashMap<>();
        if (names.isEmpty()) {
            return values;
        }
        em.unwrap(Session.class).doWork(connection -> {
            try (PreparedStatement query = connection
                    .prepareStatement("select name, value from team_secrets where team_id = ? and name = any (?)")) {
                query.setLong(1, teamEntityId);
                query.setArray(2, connection.createArrayOf("varchar", names.toArray()));
                try (ResultSet rs = query.executeQuery()) {
                    while (rs.next()) {
                        String name = rs.getString(1);
                        values.put(name, cipher.open(rs.getBytes(2), context(teamEntityId, name)));
                    }
                }
            }
        });
        return values;
    }

    /** The value of one secret, or null when the team has no such secret. */
    String open(long teamId, String name, byte[] sealed) {
        return sealed == null ? null : cipher.open(sealed, context(teamId, name));
    }

    static String context(long teamId, String name) {
        return "team-secret:" + teamId + ":" + name;
    }

    /** 422 unless {@code name} is a valid secret name. */
    static void requireName(String name, Object... loc) {
        Object[] at = loc.length == 0 ? new Object[] { "body", "name" } : loc;
        if (name == null || name.isEmpty()) {
            throw ApiException.invalid(Violation.of("A secret name is required", "missing", at));
        }
        if (name.length() > MAX_NAME || !NAME.matcher(name).matches()) {
            throw ApiException.invalid(
                    Violation.of("A secret name is upper-case letters, digits and _ (not first a digit), at most "
                            + MAX_NAME + " characters", "secret_name", at));
        }
    }

    private static void requireValue(String value) {
        if (value == null || value.isEmpty()) {
            throw ApiException.invalid(Violation.of("A secret value is required", "missing", "body", "value"));
        }
        if (value.length() > MAX_VALUE_CHARS) {
            throw ApiException.invalid(Violation.of("A secret value has at most " + MAX_VALUE_CHARS + " characters",
                    "too_long", "body", "value"));
        }
    }

    private static ApiException notFound(String team, String name) {
        return ApiException.notFound("Team " + team + " has no secret " + name);
    }

    private List<SecretInfo> infos(long teamId, String name) {
        List<SecretInfo> infos = new ArrayList<>();
        em.unwrap(Session.class).doWork(connection -> {
            try (PreparedStatement query = connection.prepareStatement("""
                    select name, created_at, updated_at from team_secrets
                    where team_id = ? and (?::varchar is null or name = ?) order by name""")) {
                query.setLong(1, teamId);
                query.setString(2, name);
                query.setString(3, name);
                try (ResultSet rs = query.executeQuery()) {
                    while (rs.next()) {
                        infos.add(new SecretInfo(rs.getString(1), rs.getObject(2, OffsetDateTime.class),
                                rs.getObject(3, OffsetDateTime.class)));
                    }
                }
            }
        });
        return infos;
    }
}
