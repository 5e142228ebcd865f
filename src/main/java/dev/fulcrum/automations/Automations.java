package dev.fulcrum.automations;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.persistence.TypedQuery;
import jakarta.transaction.Transactional;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.automations.AutomationCondition.Change;
import dev.fulcrum.automations.AutomationCondition.Threshold;
import dev.fulcrum.automations.AutomationCondition.WeaveMetric;
import dev.fulcrum.automations.AutomationCondition.ZScore;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.StoredJson;

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

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    AutomationStatements statements;

    @Inject
    StoredJson storedJson;

    @Inject
    Webhooks webhooks;

    @Inject
    TeamSecrets secrets;

    @Inject
    WebhookDeliveries deliveries;

    @Inject
    WeaveMetricTriggers weaveTriggers;

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
            Long webhookId, String payload, List<String> grantedSecrets, Boolean enabled, ZScore zscore,
            String collection, String tagRegex, String runDisplayNameRegex, AutomationAction action,
            WeaveMetric weaveMetric, Notification notification) {

        /**
         * A draft without a notification: {@code webhookId} is a webhook, or with {@code NOTIFICATION} a Slack
         * integration.
         */
        public Draft(String name, String description, TriggerEvent event, String aliasRegex, String runCreator,
                String runNameRegex, Threshold threshold, Change change, List<String> runStates, String team,
                Long webhookId, String payload, List<String> grantedSecrets, Boolean enabled, ZScore zscore,
                String collection, String tagRegex, String runDisplayNameRegex, AutomationAction action,
                WeaveMetric weaveMetric) {
            this(name, description, event, aliasRegex, runCreator, runNameRegex, threshold, change, runStates, team,
                    webhookId, payload, grantedSecrets, enabled, zscore, collection, tagRegex, runDisplayNameRegex,
                    action, weaveMetric, null);
        }

        /** What the automation stores as its payload: a notification's JSON, or the payload. */
        String storedPayload() {
            return actionOrWebhooks() == AutomationAction.NOTIFICATION && notification != null ? notification.toJson()
                    : payload;
        }

        /** A draft without a Weave metric condition. */
        public Draft(String name, String description, TriggerEvent event, String aliasRegex, String runCreator,
                String runNameRegex, Threshold threshold, Change change, List<String> runStates, String team,
                Long webhookId, String payload, List<String> grantedSecrets, Boolean enabled, ZScore zscore,
                String collection, String tagRegex, String runDisplayNameRegex, AutomationAction action) {
            this(name, description, event, aliasRegex, runCreator, runNameRegex, threshold, change, runStates, team,
                    webhookId, payload, grantedSecrets, enabled, zscore, collection, tagRegex, runDisplayNameRegex,
                    action, null);
        }

        /** A draft of a webhook automation (on update: the stored action stays). */
        public Draft(String name, String description, TriggerEvent event, String aliasRegex, String runCreator,
                String runNameRegex, Threshold threshold, Change change, List<String> runStates, String team,
                Long webhookId, String payload, List<String> grantedSecrets, Boolean enabled, ZScore zscore,
                String collection, String tagRegex, String runDisplayNameRegex) {
            this(name, description, event, aliasRegex, runCreator, runNameRegex, threshold, change, runStates, team,
                    webhookId, payload, grantedSecrets, enabled, zscore, collection, tagRegex, runDisplayNameRegex,
                    null);
        }

        /** The action a draft asks for: webhooks unless it says otherwise. */
        AutomationAction actionOrWebhooks() {
            return action == null ? AutomationAction.WEBHOOKS : action;
        }

        /** A draft without a display-name run filter (none, or on update: the stored run filter stays). */
        public Draft(String name, String description, TriggerEvent event, String aliasRegex, String runCreator,
                String runNameRegex, Threshold threshold, Change change, List<String> runStates, String team,
                Long webhookId, String payload, List<String> grantedSecrets, Boolean enabled, ZScore zscore,
                String collection, String tagRegex) {
            this(name, description, event, aliasRegex, runCreator, runNameRegex, threshold, change, runStates, team,
                    webhookId, payload, grantedSecrets, enabled, zscore, collection, tagRegex, null);
        }

        /** A draft without a tag regex (tag events: every tag). */
        public Draft(String name, String description, TriggerEvent event, String aliasRegex, String runCreator,
                String runNameRegex, Threshold threshold, Change change, List<String> runStates, String team,
                Long webhookId, String payload, List<String> grantedSecrets, Boolean enabled, ZScore zscore,
                String collection) {
            this(name, description, event, aliasRegex, runCreator, runNameRegex, threshold, change, runStates, team,
                    webhookId, payload, grantedSecrets, enabled, zscore, collection, null);
        }

        /** A draft without a collection (artifact events: every collection of the scope). */
        public Draft(String name, String description, TriggerEvent event, String aliasRegex, String runCreator,
                String runNameRegex, Threshold threshold, Change change, List<String> runStates, String team,
                Long webhookId, String payload, List<String> grantedSecrets, Boolean enabled, ZScore zscore) {
            this(name, description, event, aliasRegex, runCreator, runNameRegex, threshold, change, runStates, team,
                    webhookId, payload, grantedSecrets, enabled, zscore, null);
        }

        /** A draft without a z-score condition. */
        public Draft(String name, String description, TriggerEvent event, String aliasRegex, String runCreator,
                String runNameRegex, Threshold threshold, Change change, List<String> runStates, String team,
                Long webhookId, String payload, List<String> grantedSecrets, Boolean enabled) {
            this(name, description, event, aliasRegex, runCreator, runNameRegex, threshold, change, runStates, team,
                    webhookId, payload, grantedSecrets, enabled, null, null);
        }
    }

    /** An automation as stored, with the names of its scope and team. */
    public record AutomationView(long id, String name, String description, ScopeRef scope, TriggerEvent event,
            AutomationCondition condition, String team, Long teamEntityId, Long webhookId, String payload,
            List<String> grantedSecrets, boolean enabled, String disabledReason, String actsAs, String createdBy,
            OffsetDateTime createdAt, OffsetDateTime updatedAt, LastDelivery lastDelivery, AutomationAction action,
            OffsetDateTime lastFiredAt) {

        /** A {@code NOTIFICATION} automation's notification (stored as its payload); null for the others. */
        public Notification notification() {
            return action == AutomationAction.NOTIFICATION && payload != null ? Notification.fromJson(payload) : null;
        }

        /** The payload a webhook automation sends; null for the others. */
        public String webhookPayload() {
            return action == AutomationAction.WEBHOOKS ? payload : null;
        }
    }

    /** An automation's most recent delivery, shown with it; null when it has none. */
    public record LastDelivery(long id, String state, OffsetDateTime createdAt, OffsetDateTime completedAt) {
    }

    public ScopeRef project(String entity, String project) {
        ProjectRef ref = access.project(entity, project, Role.ADMIN);
        return new ScopeRef(ref.projectId(), null, entity, project, null);
    }

    public ScopeRef registry(String registry) {
        return new ScopeRef(null, access.registry(registry, Role.ADMIN).registryId(), null, null, registry);
    }

    @Transactional
    public List<AutomationView> list(ScopeRef scope) {
        Map<Long, LastDelivery> last = new HashMap<>();
        String column = scope.isRegistry() ? "registry_id" : "project_id";
        Long scopeId = scope.isRegistry() ? scope.registryId() : scope.projectId();
        statements.lastDeliveries(column, scopeId).forEach(entry -> last.put(entry.getKey(), entry.getValue()));
        Map<Long, OffsetDateTime> fired = new HashMap<>();
        statements.lastFirings(column, scopeId).forEach(entry -> fired.put(entry.getKey(), entry.getValue()));
        return select(scope, "order by a.id").stream()
                .map(row -> view(row, scope, last.get(row.automation().id), fired.get(row.automation().id))).toList();
    }

    @Transactional
    public AutomationView get(ScopeRef scope, long id) {
        return find(scope, id, false);
    }

    /** The project or registry of automation {@code id}, which the caller must administer (403); none: 404. */
    @Transactional
    public ScopeRef scopeOf(long id) {
        List<Object[]> found = em.createQuery("""
                select e.name, p.name, r.name from Automation a left join Project p on p.id = a.projectId
                left join PlatformEntity e on e.id = p.entityId left join Registry r on r.id = a.registryId
                where a.id = ?1""", Object[].class).setParameter(1, id).getResultList();
        if (found.isEmpty()) {
            throw ApiException.notFound("Automation " + id + " not found");
        }
        Object[] names = found.get(0);
        return names[2] != null ? registry((String) names[2]) : project((String) names[0], (String) names[1]);
    }

    /** The automations of every project of {@code entity}, project by project; the caller must administer it. */
    @Transactional
    public List<AutomationView> listOfEntity(String entity) {
        long entityId = access.entity(entity, Role.ADMIN).entityId();
        List<AutomationView> views = new ArrayList<>();
        for (Object[] project : em.createQuery("""
                select p.id, p.name from Project p where p.entityId = ?1
                and exists (select 1 from Automation a where a.projectId = p.id) order by p.name""", Object[].class)
                .setParameter(1, entityId).getResultList()) {
            views.addAll(list(new ScopeRef((Long) project[0], null, entity, (String) project[1], null)));
        }
        return views;
    }

    /** The automations of every registry the caller administers (server administrators: every registry's). */
    @Transactional
    public List<AutomationView> listOfRegistries() {
        List<AutomationView> views = new ArrayList<>();
        TypedQuery<Object[]> registries = em.createQuery("""
                select r.id, r.name from Registry r where exists (select 1 from Automation a where a.registryId = r.id)
                %s order by r.name""".formatted(access.caller().admin() ? ""
                : """
                        and exists (select 1 from RegistryMember m where m.registryId = r.id and m.userId = ?1 and m.role = ?2)"""),
                Object[].class);
        if (!access.caller().admin()) {
            registries.setParameter(1, access.caller().userId()).setParameter(2, Role.ADMIN);
        }
        for (Object[] registry : registries.getResultList()) {
            views.addAll(list(new ScopeRef(null, (Long) registry[0], null, null, (String) registry[1])));
        }
        return views;
    }

    @Transactional
    public AutomationView create(ScopeRef scope, Draft draft) {
        Checked checked = check(scope, draft, true);
        lockName(scope, draft.name());
        if (nameTaken(scope, draft.name(), null)) {
            throw ApiException.conflict("An automation named " + draft.name() + " exists in " + scope.describe());
        }
        Automation automation = new Automation();
        automation.projectId = scope.projectId();
        automation.registryId = scope.registryId();
        automation.eventType = draft.event().name();
        automation.actionType = draft.actionOrWebhooks().name();
        automation.enabled = draft.enabled() == null || draft.enabled();
        automation.createdBy = access.caller().userId();
        automation.actsAs = access.caller().userId();
        write(automation, draft, checked);
        automation.persist();
        return find(scope, automation.id, false);
    }

    @Transactional
    public AutomationView update(ScopeRef scope, long id, Draft changes) {
        AutomationView stored = find(scope, id, true);
        Draft merged = AutomationRules.merge(stored, changes);
        // the caller takes the automation over when changing what it sends where, or when enabling it
        boolean takesOver = AutomationRules.takesOver(stored, merged);
        Checked checked = check(scope, merged, takesOver);
        if (!merged.name().equals(stored.name())) {
            lockName(scope, merged.name());
            if (nameTaken(scope, merged.name(), id)) {
                throw ApiException.conflict("An automation named " + merged.name() + " exists in " + scope.describe());
            }
        }
        Automation automation = Automation.findById(id);
        if (!java.util.Objects.equals(stored.condition().weaveMetric(), merged.weaveMetric())) {
            weaveTriggers.forget(id); // a new condition: its first evaluation fires if it holds
        }
        automation.actionType = merged.actionOrWebhooks().name();
        write(automation, merged, checked);
        automation.enabled = merged.enabled();
        if (takesOver) {
            automation.actsAs = access.caller().userId();
        }
        if (merged.enabled()) {
            automation.disabledReason = null;
        }
        automation.updatedAt = AutomationStorage.now(em);
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
        Automation.deleteById(id);
        return stored;
    }

    /** The automation's delivery log, newest first. */
    @Transactional
    public WebhookDeliveries.DeliveryPage deliveries(ScopeRef scope, long id, String state, Integer limit, Long before,
            OffsetDateTime createdSince) {
        find(scope, id, false);
        return deliveries.listByAutomation(id, state, limit, before, createdSince);
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
        if (draft.actionOrWebhooks() == AutomationAction.DO_NOTHING) {
            // sends nothing: no team's rights are needed
            return new Checked(AutomationRules.condition(draft), null, List.of(), false);
        }
        if (draft.actionOrWebhooks() == AutomationAction.NOTIFICATION) {
            // a Slack integration's bot token is its own: posting needs the member role, as a webhook does
            Webhooks.Usable usable = webhooks.usableSlack(draft.team(), draft.webhookId());
            if (asCaller) {
                Webhooks.requireRole(usable, Role.MEMBER, AutomationRights.purpose(false));
            }
            AutomationRules.checkNotification(draft.notification(), draft.event());
            return new Checked(AutomationRules.condition(draft), usable.webhook(), List.of(), false);
        }
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

    /** An automation with the names of its team, its creator and the user it acts for. */
    public record Row(Automation automation, String team, String createdBy, String actsAs) {
    }

    private AutomationView find(ScopeRef scope, long id, boolean lock) {
        if (lock) {
            Automation.findById(id, LockModeType.PESSIMISTIC_WRITE);
        }
        List<Row> found = select(scope, "and a.id = ?2", id);
        if (found.isEmpty()) {
            throw ApiException.notFound("Automation " + id + " not found in " + scope.describe());
        }
        return view(found.get(0), scope);
    }

    /** The automations of the scope ({@code ?1}) that also match {@code rest} (HQL over {@code a}). */
    private List<Row> select(ScopeRef scope, String rest, Object... params) {
        TypedQuery<Row> query = em.createQuery("""
                select new dev.fulcrum.automations.Automations$Row(a, t.name, u.username, actor.username)
                from Automation a left join PlatformEntity t on t.id = a.teamEntityId
                left join User u on u.id = a.createdBy left join User actor on actor.id = a.actsAs
                where %s = ?1 %s""".formatted(scope.isRegistry() ? "a.registryId" : "a.projectId", rest), Row.class)
                .setParameter(1, scope.isRegistry() ? scope.registryId() : scope.projectId());
        for (int i = 0; i < params.length; i++) {
            query.setParameter(i + 2, params[i]);
        }
        return query.getResultList();
    }

    private AutomationView view(Row row, ScopeRef scope) {
        long id = row.automation().id;
        return view(row, scope, statements.lastDelivery(id).orElse(null), statements.lastFiring(id).orElse(null));
    }

    private AutomationView view(Row row, ScopeRef scope, LastDelivery lastDelivery, OffsetDateTime lastFiring) {
        Automation a = row.automation();
        AutomationAction action = AutomationAction.valueOf(a.actionType);
        // a webhook or notification automation fired when it made its newest delivery; DoNothing's firings are recorded
        OffsetDateTime lastFiredAt = action != AutomationAction.DO_NOTHING
                ? (lastDelivery == null ? null : lastDelivery.createdAt())
                : lastFiring;
        return new AutomationView(a.id, a.name, a.description, scope, TriggerEvent.valueOf(a.eventType),
                AutomationCondition.fromJson(storedJson.readObject(a.condition)), row.team(), a.teamEntityId,
                a.webhookId, a.payload, List.copyOf(a.grantedSecrets), a.enabled, a.disabledReason, row.actsAs(),
                row.createdBy(), a.createdAt, a.updatedAt, lastDelivery, action, lastFiredAt);
    }

    /** Sets what a checked draft decides: name, description, condition, webhook, payload and secrets. */
    private void write(Automation automation, Draft draft, Checked checked) {
        automation.name = draft.name();
        automation.description = draft.description();
        automation.condition = storedJson.write(checked.condition().toJson());
        automation.teamEntityId = checked.webhook() == null ? null : checked.webhook().teamEntityId();
        automation.webhookId = checked.webhook() == null ? null : checked.webhook().id();
        automation.payload = draft.storedPayload();
        automation.grantedSecrets = new ArrayList<>(checked.grantedSecrets());
        automation.usesSecrets = checked.usesSecrets();
    }

    private boolean nameTaken(ScopeRef scope, String name, Long except) {
        return Automation.count(
                "name = ?1 and projectId is not distinct from ?2 and registryId is not distinct from ?3 and id <> ?4",
                name, scope.projectId(), scope.registryId(), except == null ? -1L : except) > 0;
    }

    private void lockName(ScopeRef scope, String name) {
        AutomationStorage.lockName(em, scope.isRegistry() ? "registry-automation" : "project-automation",
                scope.isRegistry() ? scope.registryId() : scope.projectId(), name);
    }
}
