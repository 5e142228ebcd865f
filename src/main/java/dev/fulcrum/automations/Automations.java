package dev.fulcrum.automations;

import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.hibernate.Session;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.automations.AutomationCondition.Change;
import dev.fulcrum.automations.AutomationCondition.Threshold;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;
import dev.fulcrum.platform.StoredJson;

/**
 * Automations of projects (project admins) and registries (registry admins). Saving checks the event-specific fields,
 * the webhook, the granted secrets (they must exist in the webhook's team) and the payload (known variables and granted
 * secrets only; it must render against a sample event).
 * <p>
 * An automation acts with the rights of one user ({@code acts_as}): its creator, or whoever later changed its webhook,
 * payload or granted secrets or enabled it; that caller must then have the rights the automation needs
 * ({@link AutomationRights}: the member role on the webhook's team, the admin role when the payload carries secrets).
 * They are checked again whenever a delivery is sent; one refused for missing rights disables the automation with the
 * reason ({@code disabled_reason}) until an entitled caller enables it again and so becomes the one it acts for.
 */
@ApplicationScoped
public class Automations {

    private static final String COLUMNS = """
            a.id, a.name, a.description, a.project_id, a.registry_id, a.event_type, a.condition::text,
            t.name, a.webhook_id, a.payload, a.granted_secrets, a.enabled, u.username, a.created_at, a.updated_at,
            a.team_entity_id, a.disabled_reason, actor.username
            from automations a join entities t on t.id = a.team_entity_id left join users u on u.id = a.created_by
            left join users actor on actor.id = a.acts_as""";

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    Webhooks webhooks;

    @Inject
    TeamSecrets secrets;

    @Inject
    WebhookDeliveries deliveries;

    /** A project or a registry the caller administers. */
    public record ScopeRef(Long projectId, Long registryId, String entity, String project, String registry) {
        boolean isRegistry() {
            return registryId != null;
        }

        String describe() {
            return isRegistry() ? "registry " + registry : entity + "/" + project;
        }
    }

    /** What a caller asks for; on update, null fields keep their stored value. */
    public record Draft(String name, String description, TriggerEvent event, String aliasRegex, String runCreator,
            String runNameRegex, Threshold threshold, Change change, List<String> runStates, String team,
            Long webhookId, String payload, List<String> grantedSecrets, Boolean enabled) {
    }

    /** An automation as stored, with the names of its scope and team. */
    public record AutomationView(long id, String name, String description, ScopeRef scope, TriggerEvent event,
            AutomationCondition condition, String team, long teamEntityId, long webhookId, String payload,
            List<String> grantedSecrets, boolean enabled, String disabledReason, String actsAs, String createdBy,
            OffsetDateTime createdAt, OffsetDateTime updatedAt) {
    }

    public ScopeRef project(String entity, String project) {
        Names.requireEntity(entity, "path", "entity");
        Names.requireProject(project, "path", "project");
        ProjectRef ref = access.project(entity, project, Role.ADMIN);
        return new ScopeRef(ref.projectId(), null, entity, project, null);
    }

    public ScopeRef registry(String registry) {
        Names.requireEntity(registry, "path", "registry");
        return new ScopeRef(null, access.registry(registry, Role.ADMIN).registryId(), null, null, registry);
    }

    @Transactional
    public List<AutomationView> list(ScopeRef scope) {
        return jdbc(c -> {
            try (PreparedStatement query = c.prepareStatement("select " + COLUMNS + " where "
                    + (scope.isRegistry() ? "a.registry_id" : "a.project_id") + " = ? order by a.id")) {
                query.setLong(1, scope.isRegistry() ? scope.registryId() : scope.projectId());
                List<AutomationView> found = new ArrayList<>();
                try (ResultSet rs = query.executeQuery()) {
                    while (rs.next()) {
                        found.add(view(rs, scope));
                    }
                }
                return found;
            }
        });
    }

    @Transactional
    public AutomationView get(ScopeRef scope, long id) {
        return find(scope, id, false);
    }

    @Transactional
    public AutomationView create(ScopeRef scope, Draft draft) {
        AutomationRules.requireFields(draft);
        Checked checked = check(scope, draft, true);
        Long id = jdbc(c -> {
            try (PreparedStatement insert = c.prepareStatement("""
                    insert into automations (name, description, project_id, registry_id, event_type, condition,
                    team_entity_id, webhook_id, payload, granted_secrets, enabled, created_by, acts_as, uses_secrets)
                    values (?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?, ?) on conflict do nothing returning id""")) {
                insert.setString(1, draft.name());
                insert.setString(2, draft.description());
                setLong(insert, 3, scope.projectId());
                setLong(insert, 4, scope.registryId());
                insert.setString(5, draft.event().name());
                insert.setString(6, storedJson.write(checked.condition().toJson()));
                insert.setLong(7, checked.webhook().teamEntityId());
                insert.setLong(8, checked.webhook().id());
                insert.setString(9, draft.payload());
                insert.setArray(10, c.createArrayOf("text", checked.grantedSecrets().toArray()));
                insert.setBoolean(11, draft.enabled() == null || draft.enabled());
                insert.setLong(12, access.caller().userId());
                insert.setLong(13, access.caller().userId());
                insert.setBoolean(14, checked.usesSecrets());
                try (ResultSet rs = insert.executeQuery()) {
                    return rs.next() ? rs.getLong(1) : null;
                }
            }
        });
        if (id == null) {
            throw ApiException.conflict("An automation named " + draft.name() + " exists in " + scope.describe());
        }
        return find(scope, id, false);
    }

    @Transactional
    public AutomationView update(ScopeRef scope, long id, Draft changes) {
        AutomationView stored = find(scope, id, true);
        Draft merged = AutomationRules.merge(stored, changes);
        AutomationRules.requireFields(merged);
        // the caller takes the automation over when changing what it sends where, or when enabling it
        boolean takesOver = AutomationRules.takesOver(stored, merged);
        Checked checked = check(scope, merged, takesOver);
        boolean updated = jdbc(c -> {
            try (PreparedStatement update = c.prepareStatement("""
                    update automations set name = ?, description = ?, condition = ?::jsonb, team_entity_id = ?,
                    webhook_id = ?, payload = ?, granted_secrets = ?, enabled = ?, updated_at = now(),
                    uses_secrets = ?, acts_as = case when ? then ? else acts_as end,
                    disabled_reason = case when ? then null else disabled_reason end
                    where id = ? and not exists (select 1 from automations o where o.id <> ? and o.name = ?
                    and o.project_id is not distinct from ? and o.registry_id is not distinct from ?)""")) {
                update.setString(1, merged.name());
                update.setString(2, merged.description());
                update.setString(3, storedJson.write(checked.condition().toJson()));
                update.setLong(4, checked.webhook().teamEntityId());
                update.setLong(5, checked.webhook().id());
                update.setString(6, merged.payload());
                update.setArray(7, c.createArrayOf("text", checked.grantedSecrets().toArray()));
                update.setBoolean(8, merged.enabled());
                update.setBoolean(9, checked.usesSecrets());
                update.setBoolean(10, takesOver);
                update.setLong(11, access.caller().userId());
                update.setBoolean(12, merged.enabled());
                update.setLong(13, id);
                update.setLong(14, id);
                update.setString(15, merged.name());
                setLong(update, 16, scope.projectId());
                setLong(update, 17, scope.registryId());
                return update.executeUpdate() == 1;
            }
        });
        if (!updated) {
            throw ApiException.conflict("An automation named " + merged.name() + " exists in " + scope.describe());
        }
        return find(scope, id, false);
    }

    /** Deletes the automation if {@code confirm} is its name; answers what was deleted. */
    @Transactional
    public AutomationView delete(ScopeRef scope, long id, String confirm) {
        AutomationView stored = find(scope, id, true);
        if (confirm == null || !confirm.equals(stored.name())) {
            throw ApiException.invalid(Violation.of(
                    "To delete automation " + id + ", pass its name as confirm (confirm=" + stored.name() + ")",
                    "confirmation", "query", "confirm"));
        }
        jdbc(c -> {
            try (PreparedStatement delete = c.prepareStatement("delete from automations where id = ?")) {
                delete.setLong(1, id);
                return delete.executeUpdate();
            }
        });
        return stored;
    }

    /** The automation's delivery log, newest first. */
    @Transactional
    public WebhookDeliveries.DeliveryPage deliveries(ScopeRef scope, long id, String state, Integer limit,
            Long before) {
        find(scope, id, false);
        return deliveries.listByAutomation(id, state, limit, before);
    }

    /** Sends one delivery of the automation again, with a fresh retry schedule. */
    @Transactional
    public WebhookDeliveries.Delivery redeliver(ScopeRef scope, long id, long deliveryId) {
        find(scope, id, false);
        return deliveries.redeliverOfAutomation(id, deliveryId);
    }

    /** Sends every failed delivery of the automation created since {@code since} again; the number of them. */
    @Transactional
    public int redeliverFailed(ScopeRef scope, long id, OffsetDateTime since) {
        find(scope, id, false);
        return deliveries.redeliverFailedOfAutomation(id, since);
    }

    // ---------------------------------------------------------------- checks

    private record Checked(AutomationCondition condition, WebhookRef webhook, List<String> grantedSecrets,
            boolean usesSecrets) {
    }

    /**
     * Checks the draft; with {@code asCaller} also that the caller has the rights the automation needs (403 naming the
     * missing role and what it is for).
     */
    private Checked check(ScopeRef scope, Draft draft, boolean asCaller) {
        AutomationRules.checkFields(scope.isRegistry(), draft);
        List<String> granted = AutomationRules.grantedSecrets(draft);
        Webhooks.Usable usable = webhooks.usable(draft.team(), draft.webhookId());
        WebhookRef webhook = usable.webhook();
        Set<String> variables = draft.payload() == null ? Set.of() : PayloadTemplate.parse(draft.payload()).variables();
        boolean usesSecrets = AutomationRights.usesSecrets(variables, granted);
        if (asCaller) {
            Webhooks.requireRole(usable, Role.MEMBER, AutomationRights.purpose(false));
            if (usesSecrets) {
                Webhooks.requireRole(usable, Role.ADMIN, AutomationRights.purpose(true));
            }
        }
        Set<String> existing = secrets.names(webhook.teamEntityId());
        List<String> unknown = granted.stream().filter(s -> !existing.contains(s)).toList();
        if (!unknown.isEmpty()) {
            throw ApiException
                    .invalid(Violation.of("Team " + draft.team() + " has no secret named " + String.join(", ", unknown),
                            "unknown_secret", "body", "granted_secrets"));
        }
        AutomationRules.checkPayload(draft.payload(), draft.event(), granted,
                webhooks.payloadSecretNames(webhook.id()));
        return new Checked(AutomationRules.condition(draft), webhook, granted, usesSecrets);
    }

    // ---------------------------------------------------------------- storage

    private AutomationView find(ScopeRef scope, long id, boolean lock) {
        AutomationView found = jdbc(c -> {
            try (PreparedStatement query = c.prepareStatement("select " + COLUMNS + " where a.id = ? and "
                    + (scope.isRegistry() ? "a.registry_id" : "a.project_id") + " = ?"
                    + (lock ? " for update of a" : ""))) {
                query.setLong(1, id);
                query.setLong(2, scope.isRegistry() ? scope.registryId() : scope.projectId());
                try (ResultSet rs = query.executeQuery()) {
                    return rs.next() ? view(rs, scope) : null;
                }
            }
        });
        if (found == null) {
            throw ApiException.notFound("Automation " + id + " not found in " + scope.describe());
        }
        return found;
    }

    private AutomationView view(ResultSet rs, ScopeRef scope) throws SQLException {
        return new AutomationView(rs.getLong(1), rs.getString(2), rs.getString(3), scope,
                TriggerEvent.valueOf(rs.getString(6)),
                AutomationCondition.fromJson(storedJson.readObject(rs.getString(7))), rs.getString(8), rs.getLong(16),
                rs.getLong(9), rs.getString(10), strings(rs.getArray(11)), rs.getBoolean(12), rs.getString(17),
                rs.getString(18), rs.getString(13), rs.getObject(14, OffsetDateTime.class),
                rs.getObject(15, OffsetDateTime.class));
    }

    static List<String> strings(Array array) throws SQLException {
        return Arrays.asList((String[]) array.getArray());
    }

    private static void setLong(PreparedStatement statement, int index, Long value) throws SQLException {
        if (value == null) {
            statement.setNull(index, Types.BIGINT);
        } else {
            statement.setLong(index, value);
        }
    }

    private <T> T jdbc(org.hibernate.jdbc.ReturningWork<T> work) {
        return em.unwrap(Session.class).doReturningWork(work);
    }
}
