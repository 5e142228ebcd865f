package dev.fulcrum.automations;

import java.time.OffsetDateTime;
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

import io.quarkus.panache.common.Sort;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

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

    @Inject
    Access access;

    @Inject
    SecretCipher cipher;

    @Inject
    EntityManager em;

    /** A secret as the API shows it: never its value. */
    public record SecretInfo(String name, OffsetDateTime createdAt, OffsetDateTime updatedAt) {
    }

    @Transactional
    public List<SecretInfo> list(String team) {
        long teamId = access.team(team, Role.ADMIN).entityId();
        return TeamSecret.find("teamId", Sort.by("name"), teamId).project(SecretInfo.class).list();
    }

    @Transactional
    public SecretInfo create(String team, String name, String value) {
        long teamId = access.team(team, Role.ADMIN).entityId();
        AutomationStorage.lockName(em, "secret", teamId, name);
        if (find(teamId, name) != null) {
            throw ApiException.conflict("Team " + team + " already has a secret " + name);
        }
        TeamSecret secret = new TeamSecret();
        secret.teamId = teamId;
        secret.name = name;
        secret.value = cipher.seal(value, context(teamId, name));
        secret.persist();
        return info(secret);
    }

    /** Replaces the value of an existing secret. */
    @Transactional
    public SecretInfo update(String team, String name, String value) {
        long teamId = access.team(team, Role.ADMIN).entityId();
        TeamSecret secret = find(teamId, name);
        if (secret == null) {
            throw notFound(team, name);
        }
        secret.value = cipher.seal(value, context(teamId, name));
        secret.updatedAt = AutomationStorage.now(em);
        return info(secret);
    }

    /** Deletes a secret; 409 while a webhook of the team uses it. */
    @Transactional
    public void delete(String team, String name) {
        long teamId = access.team(team, Role.ADMIN).entityId();
        List<String> users = em.createQuery("""
                select w.name from TeamWebhook w
                where w.teamId = ?1 and (w.accessTokenSecret = ?2 or w.signingSecret = ?2) order by w.name""",
                String.class).setParameter(1, teamId).setParameter(2, name).getResultList();
        if (!users.isEmpty()) {
            throw ApiException.conflict(
                    "Secret " + name + " is used by webhook(s) or Slack integration(s) " + String.join(", ", users));
        }
        if (TeamSecret.delete("teamId = ?1 and name = ?2", teamId, name) == 0) {
            throw notFound(team, name);
        }
    }

    /** The names of the team's secrets (for checking what a payload may reference); no permission check. */
    @Transactional
    public Set<String> names(long teamEntityId) {
        return new LinkedHashSet<>(
                em.createQuery("select s.name from TeamSecret s where s.teamId = ?1 order by s.name", String.class)
                        .setParameter(1, teamEntityId).getResultList());
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
        List<TeamSecret> found = TeamSecret.list("teamId = ?1 and name in ?2", teamEntityId, List.copyOf(names));
        for (TeamSecret secret : found) {
            values.put(secret.name, cipher.open(secret.value, context(teamEntityId, secret.name)));
        }
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

    private static ApiException notFound(String team, String name) {
        return ApiException.notFound("Team " + team + " has no secret " + name);
    }

    private static TeamSecret find(long teamId, String name) {
        return TeamSecret.find("teamId = ?1 and name = ?2", teamId, name).firstResult();
    }

    private SecretInfo info(TeamSecret secret) {
        em.flush();
        return new SecretInfo(secret.name, secret.createdAt, secret.updatedAt);
    }
}
