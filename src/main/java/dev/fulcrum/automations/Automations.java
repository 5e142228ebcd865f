package dev.fulcrum.automations;

import java.sql.Array;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

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

    static final int MAX_NAME = 128;
    static final int MAX_DESCRIPTION = 4096;
    static final int MAX_PAYLOAD = 65_536;
    static final int MAX_WINDOW = 1000;
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
        requireFields(draft);
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
        if (changes.event() != null && changes.event() != stored.event()) {
            throw ApiException
                    .invalid(Violation.of("The event of an automation cannot change", "immutable", "body", "event"));
        }
        AutomationCondition was = stored.condition();
        Draft merged = new Draft(or(changes.name(), stored.name()), or(changes.description(), stored.description()),
                stored.event(), or(changes.aliasRegex(), was.aliasRegex()),
                changes.runCreator() != null || changes.runNameRegex() != null ? changes.runCreator()
                        : was.runCreator(),
                changes.runCreator() != null || changes.runNameRegex() != null ? changes.runNameRegex()
                        : was.runNameRegex(),
                or(changes.threshold(), was.threshold()), or(changes.change(), was.change()),
                or(changes.runStates(), was.runStates()), or(changes.team(), stored.team()),
                or(changes.webhookId(), stored.webhookId()), or(changes.payload(), stored.payload()),
                or(changes.grantedSecrets(), stored.grantedSecrets()), or(changes.enabled(), stored.enabled()));
        requireFields(merged);
        // the caller takes the automation over when changing what it sends where, or when enabling it
        boolean takesOver = merged.enabled() && !stored.enabled() || !merged.team().equals(stored.team())
                || merged.webhookId() != stored.webhookId() || !Objects.equals(merged.payload(), stored.payload())
                || !new HashSet<>(merged.grantedSecrets()).equals(new HashSet<>(stored.grantedSecrets()));
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

    private static void requireFields(Draft draft) {
        List<Violation> missing = new ArrayList<>();
        if (draft.name() == null) {
            missing.add(Violation.of("Field required", "missing", "body", "name"));
        }
        if (draft.event() == null) {
            missing.add(Violation.of("Field required", "missing", "body", "event"));
        }
        if (draft.team() == null) {
            missing.add(Violation.of("Field required", "missing", "body", "team"));
        }
        if (draft.webhookId() == null) {
            missing.add(Violation.of("Field required", "missing", "body", "webhook_id"));
        }
        if (!missing.isEmpty()) {
            throw ApiException.invalid(missing);
        }
    }

    /**
     * Checks the draft; with {@code asCaller} also that the caller has the rights the automation needs (403 naming the
     * missing role and what it is for).
     */
    private Checked check(ScopeRef scope, Draft draft, boolean asCaller) {
        List<Violation> problems = new ArrayList<>();
        String name = draft.name();
        if (name.isBlank() || name.length() > MAX_NAME) {
            problems.add(Violation.of("Must be 1 to " + MAX_NAME + " characters, not blank", "string_too_long", "body",
                    "name"));
        }
        if (draft.description() != null && draft.description().length() > MAX_DESCRIPTION) {
            problems.add(Violation.of("At most " + MAX_DESCRIPTION + " characters", "string_too_long", "body",
                    "description"));
        }
        TriggerEvent event = draft.event();
        if (scope.isRegistry() && !event.inRegistries()) {
            problems.add(Violation.of("Registry automations watch ADD_ARTIFACT_ALIAS, ADD_ARTIFACT_TAG or "
                    + "LINK_ARTIFACT, not " + event, "enum", "body", "event"));
        }
        checkEventFields(draft, problems);
        if (draft.payload() != null && draft.payload().length() > MAX_PAYLOAD) {
            problems.add(Violation.of("At most " + MAX_PAYLOAD + " characters", "string_too_long", "body", "payload"));
        }
        List<String> granted = draft.grantedSecrets() == null ? List.of()
                : draft.grantedSecrets().stream().filter(Objects::nonNull).distinct().sorted().toList();
        if (draft.grantedSecrets() != null && draft.grantedSecrets().contains(null)) {
            problems.add(Violation.of("Secret names are upper-case letters, digits and '_': null",
                    "string_pattern_mismatch", "body", "granted_secrets"));
        }
        for (String secret : granted) {
            if (!AutomationVariables.SECRET_NAME.matcher(secret).matches()) {
                problems.add(Violation.of("Secret names are upper-case letters, digits and '_': " + secret,
                        "string_pattern_mismatch", "body", "granted_secrets"));
            }
        }
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems);
        }
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
        checkPayload(draft.payload(), event, granted, webhooks.payloadSecretNames(webhook.id()));
        AutomationCondition condition = AutomationCondition.of(draft.aliasRegex(), emptyToNull(draft.runCreator()),
                emptyToNull(draft.runNameRegex()), draft.threshold(), draft.change(), draft.runStates());
        return new Checked(condition, webhook, granted, usesSecrets);
    }

    private static void checkEventFields(Draft draft, List<Violation> problems) {
        TriggerEvent event = draft.event();
        if (event == TriggerEvent.ADD_ARTIFACT_ALIAS) {
            if (draft.aliasRegex() == null || draft.aliasRegex().isEmpty()) {
                problems.add(Violation.of("ADD_ARTIFACT_ALIAS automations need an alias regular expression", "missing",
                        "body", "alias_regex"));
            } else {
                regex(draft.aliasRegex(), problems, "alias_regex");
            }
        } else if (draft.aliasRegex() != null) {
            problems.add(Violation.of("Only ADD_ARTIFACT_ALIAS automations have an alias regular expression",
                    "extra_forbidden", "body", "alias_regex"));
        }
        if (!event.isRunEvent()
                && (emptyToNull(draft.runCreator()) != null || emptyToNull(draft.runNameRegex()) != null)) {
            problems.add(Violation.of("Run filters are for run events only", "extra_forbidden", "body", "run_filter"));
        }
        if (emptyToNull(draft.runNameRegex()) != null) {
            regex(draft.runNameRegex(), problems, "run_filter", "name_regex");
        }
        if (event == TriggerEvent.RUN_METRIC_THRESHOLD) {
            Threshold threshold = draft.threshold();
            if (threshold == null) {
                problems.add(Violation.of("RUN_METRIC_THRESHOLD automations need metric_threshold", "missing", "body",
                        "metric_threshold"));
            } else {
                metric(threshold.metric(), threshold.window(), problems, "metric_threshold");
                if (!Double.isFinite(threshold.threshold())) {
                    problems.add(Violation.of("Must be a finite number", "finite_number", "body", "metric_threshold",
                            "threshold"));
                }
            }
        } else if (draft.threshold() != null) {
            problems.add(Violation.of("Only RUN_METRIC_THRESHOLD automations have metric_threshold", "extra_forbidden",
                    "body", "metric_threshold"));
        }
        if (event == TriggerEvent.RUN_METRIC_CHANGE) {
            Change change = draft.change();
            if (change == null) {
                problems.add(Violation.of("RUN_METRIC_CHANGE automations need metric_change", "missing", "body",
                        "metric_change"));
            } else {
                metric(change.metric(), change.window(), problems, "metric_change");
                if (!Double.isFinite(change.amount()) || change.amount() < 0) {
                    problems.add(Violation.of("Must be a finite number, at least 0", "finite_number", "body",
                            "metric_change", "amount"));
                }
            }
        } else if (draft.change() != null) {
            problems.add(Violation.of("Only RUN_METRIC_CHANGE automations have metric_change", "extra_forbidden",
                    "body", "metric_change"));
        }
        if (event != TriggerEvent.RUN_STATE && draft.runStates() != null && !draft.runStates().isEmpty()) {
            problems.add(Violation.of("Only RUN_STATE automations have run_states", "extra_forbidden", "body",
                    "run_states"));
        }
    }

    private static void metric(String metric, int window, List<Violation> problems, String field) {
        if (metric == null || metric.isEmpty() || metric.length() > 256) {
            problems.add(Violation.of("Must be 1 to 256 characters", "string_too_long", "body", field, "metric"));
        }
        if (window < 1 || window > MAX_WINDOW) {
            problems.add(Violation.of("Must be 1 to " + MAX_WINDOW, "range", "body", field, "window"));
        }
    }

    private static void regex(String regex, List<Violation> problems, Object... field) {
        String problem = AutomationCondition.problem(regex);
        if (problem != null) {
            Object[] loc = new Object[field.length + 1];
            loc[0] = "body";
            System.arraycopy(field, 0, loc, 1, field.length);
            problems.add(Violation.of(problem, "regex", loc));
        }
    }

    /**
     * Known variables and granted secrets only; then the payload must render, against a sample event, to JSON. Secret
     * values in the sample are made up: the check never reads a secret.
     */
    static void checkPayload(String payload, TriggerEvent event, List<String> granted, Set<String> webhookSecrets) {
        if (payload == null) {
            return;
        }
        PayloadTemplate template = PayloadTemplate.parse(payload);
        List<String> unknown = new ArrayList<>();
        List<String> ungranted = new ArrayList<>();
        Map<String, String> sample = AutomationVariables.sample(event);
        for (String variable : new TreeSet<>(template.variables())) {
            if (AutomationVariables.ACCESS_TOKEN.equals(variable)) {
                if (webhookSecrets.contains(variable)) {
                    sample.put(variable, "sample-access-token");
                } else {
                    ungranted.add(variable + " (the webhook has no access token)");
                }
            } else if (AutomationVariables.SECRET_NAME.matcher(variable).matches()) {
                if (granted.contains(variable) || webhookSecrets.contains(variable)) {
                    sample.put(variable, "sample-secret");
                } else {
                    ungranted.add(variable);
                }
            } else if (AutomationVariables.known(event, variable)) {
                sample.putIfAbsent(variable, "sample");
            } else {
                unknown.add(variable);
            }
        }
        List<Violation> problems = new ArrayList<>();
        if (!unknown.isEmpty()) {
            problems.add(Violation.of("Unknown variables for " + event + ": " + String.join(", ", unknown),
                    "unknown_variable", "body", "payload"));
        }
        if (!ungranted.isEmpty()) {
            problems.add(Violation.of(
                    "Secrets used but not granted (add them to granted_secrets): " + String.join(", ", ungranted),
                    "ungranted_secret", "body", "payload"));
        }
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems);
        }
        template.render(sample);
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

    private static String emptyToNull(String value) {
        return value == null || value.isEmpty() ? null : value;
    }

    private static <T> T or(T given, T stored) {
        return given != null ? given : stored;
    }

    private <T> T jdbc(org.hibernate.jdbc.ReturningWork<T> work) {
        return em.unwrap(Session.class).doReturningWork(work);
    }
}
