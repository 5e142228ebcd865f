package dev.fulcrum.wandb;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.automations.AutomationAction;
import dev.fulcrum.automations.Automations;
import dev.fulcrum.automations.Automations.AutomationView;
import dev.fulcrum.automations.Automations.Draft;
import dev.fulcrum.automations.Automations.ScopeRef;
import dev.fulcrum.automations.Notification;
import dev.fulcrum.automations.PayloadTemplate;
import dev.fulcrum.automations.SlackIntegrations;
import dev.fulcrum.automations.Webhooks;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.wandb.WandbEventFilters.Conditions;
import dev.fulcrum.wandb.WandbNodes.EntityNode;
import dev.fulcrum.wandb.WandbNodes.ProjectNode;

import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * The SDK's automations ({@code wandb.automations}, {@code Api().create_automation} and the rest) as Fulcrum's: a
 * trigger is an automation of the automations service, made, read, changed and deleted through it with its rights
 * (project or registry admins; the webhook's team's member role, its admin role for secrets; {@code acts_as});
 * integrations are {@link WandbIntegrations}'. The SDK's scope, event filter and action are translated here
 * ({@link WandbEventFilters}); what Fulcrum has not is refused with a 422 naming it.
 */
@ApplicationScoped
class WandbAutomations {

    /** A secret variable of a payload (the SDK has no grants: those its payload names are its grants). */
    private static final Pattern SECRET = Pattern.compile("[A-Z_][A-Z0-9_]*");

    /**
     * The server features of automations the SDK checks before it sends one: the automations of an entity are queried
     * on it, and the run events and artifact tag events are offered (the SDK offers no other event unless announced).
     */
    static final List<WandbNodes.ServerFeature> FEATURES = List.of(
            new WandbNodes.ServerFeature("QUERY_AUTOMATIONS_ON_ENTITY", true),
            new WandbNodes.ServerFeature("AUTOMATION_EVENT_RUN_METRIC", true),
            new WandbNodes.ServerFeature("AUTOMATION_EVENT_RUN_METRIC_CHANGE", true),
            new WandbNodes.ServerFeature("AUTOMATION_EVENT_RUN_METRIC_ZSCORE", true),
            new WandbNodes.ServerFeature("AUTOMATION_EVENT_RUN_STATE", true),
            new WandbNodes.ServerFeature("AUTOMATION_EVENT_ADD_ARTIFACT_TAG", true),
            new WandbNodes.ServerFeature("AUTOMATION_EVENT_REMOVE_ARTIFACT_TAG", true),
            new WandbNodes.ServerFeature("AUTOMATION_EVENT_ADD_COLLECTION_TAG", true),
            new WandbNodes.ServerFeature("AUTOMATION_EVENT_REMOVE_COLLECTION_TAG", true),
            new WandbNodes.ServerFeature("AUTOMATION_EVENT_UNLINK_ARTIFACT", true));

    @Inject
    Access access;

    @Inject
    Automations automations;

    @Inject
    Webhooks webhooks;

    @Inject
    SlackIntegrations slack;

    /** An automation as a {@code Trigger}. */
    record TriggerNode(AutomationView view) {
    }

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring.type("Entity", type -> type.dataFetcher("triggers", this::entityTriggers))
                .type("Project", type -> type.dataFetcher("triggers", env -> {
                    ProjectNode project = env.getSource();
                    ScopeRef scope = project.registry() != null ? automations.registry(project.registry().registry())
                            : automations.project(project.entityName(), project.name());
                    return automations.list(scope).stream().filter(WandbAutomations::shown).map(TriggerNode::new)
                            .toList();
                }))
                .type("Mutation", type -> type.dataFetcher("createFilterTrigger", this::create)
                        .dataFetcher("updateFilterTrigger", this::update).dataFetcher("deleteTrigger", this::delete))
                .type("TriggerScope", type -> type.typeResolver(env -> env.getSchema().getObjectType(
                        env.getObject() instanceof WandbArtifactNodes.CollectionNode ? "ArtifactSequence" : "Project")))
                .type("TriggeringCondition",
                        type -> type
                                .typeResolver(env -> env.getSchema().getObjectType("FilterEventTriggeringCondition")))
                .type("TriggeredAction",
                        type -> type.typeResolver(env -> env.getSchema()
                                .getObjectType(env.getObject() instanceof Map<?, ?> shown && shown.containsKey("noOp")
                                        ? "NoOpTriggeredAction"
                                        : env.getObject() instanceof Map<?, ?> shown && shown.containsKey("severity")
                                                ? "NotificationTriggeredAction"
                                                : "GenericWebhookTriggeredAction")))
                .type("Trigger",
                        type -> type.dataFetcher("id", trigger(view -> triggerId(view.id())))
                                .dataFetcher("name", trigger(AutomationView::name))
                                .dataFetcher("description", trigger(AutomationView::description))
                                .dataFetcher("enabled", trigger(AutomationView::enabled))
                                .dataFetcher("createdAt", trigger(view -> view.createdAt().toString()))
                                .dataFetcher("updatedAt",
                                        trigger(view -> view.updatedAt() == null ? null : view.updatedAt().toString()))
                                .dataFetcher("scope", trigger(this::scopeNode))
                                .dataFetcher("triggeringCondition",
                                        trigger(view -> Map.of("eventType", WandbEventFilters.sdkType(view.event()),
                                                "filter", WandbEventFilters.saved(view.event(), view.condition()))))
                                .dataFetcher("triggeredAction", trigger(this::shownAction)));
    }

    private interface TriggerField {
        Object read(AutomationView view);
    }

    private static graphql.schema.DataFetcher<Object> trigger(TriggerField field) {
        return env -> field.read(((TriggerNode) env.getSource()).view());
    }

    // ---------------------------------------------------------------- listing

    private Map<String, Object> entityTriggers(DataFetchingEnvironment env) {
        EntityNode entity = env.getSource();
        int size = WandbPages.size(env.getArgument("first"), 50);
        int offset = WandbPages.offset(env.getArgument("after"));
        if (env.getArgument("order") != null) {
            throw ApiException.invalid(Violation.of("Automations are listed by project and id; order is not offered",
                    "value_error", "query", "order"));
        }
        String name = nameFilter(env.getArgument("filters"));
        List<AutomationView> all = (WandbRegistries.ORG_ENTITY.equals(entity.name()) ? automations.listOfRegistries()
                : automations.listOfEntity(entity.name())).stream()
                        .filter(view -> shown(view) && (name == null || name.equals(view.name()))).toList();
        List<Map<String, Object>> edges = new ArrayList<>();
        for (int i = offset; i < Math.min(all.size(), offset + size); i++) {
            edges.add(Map.of("node", new TriggerNode(all.get(i)), "cursor", WandbPages.cursor(i)));
        }
        return WandbPages.connection(edges, offset + size < all.size(), null);
    }

    /**
     * Whether the SDK is shown the automation: not a {@code WEAVE_METRIC_THRESHOLD} one, which the GraphQL schema names
     * but the SDK's {@code EventType} does not (0.31.0 fails to read a listing that holds one).
     */
    private static boolean shown(AutomationView view) {
        return !view.event().isWeaveEvent();
    }

    /** The name {@code filters} asks for ({@code {"name": "..."}}, the SDK's {@code automations(name=)}), or null. */
    private static String nameFilter(String filters) {
        if (filters == null) {
            return null;
        }
        ObjectNode filter = SdkJson.object(filters, "filters");
        if (filter.isEmpty()) {
            return null;
        }
        JsonNode name = filter.get("name");
        if (filter.size() != 1 || name == null || !name.isTextual()) {
            throw ApiException.invalid(Violation.of("Automations are filtered by {\"name\": \"<name>\"} only",
                    "value_error", "query", "filters"));
        }
        return name.asText();
    }

    /** The automation's project (a registry as its project) or, with a collection, that collection. */
    private Object scopeNode(AutomationView view) {
        ScopeRef scope = view.scope();
        String collection = view.condition().collection();
        if (collection != null) {
            return scope.registryId() != null
                    ? WandbArtifactNodes.CollectionNode.ofRegistry(scope.registry(), collection, null)
                    : WandbArtifactNodes.CollectionNode.of(scope.entity(), scope.project(), collection, null);
        }
        return scope.registryId() != null ? ProjectNode.of(access.registry(scope.registry(), Role.VIEWER))
                : ProjectNode.of(access.project(scope.entity(), scope.project(), Role.VIEWER));
    }

    private Map<String, Object> shownAction(AutomationView view) {
        if (view.action() == AutomationAction.DO_NOTHING) {
            return Map.of("noOp", true);
        }
        if (view.action() == AutomationAction.NOTIFICATION) {
            Notification notification = view.notification();
            Map<String, Object> action = new HashMap<>();
            action.put("integration", WandbIntegrations.slackNode(slack.shown(view.webhookId())));
            action.put("title", notification.title());
            action.put("message", notification.message());
            action.put("severity", notification.severity());
            return action;
        }
        Webhooks.Shown webhook = webhooks.shown(view.webhookId());
        Map<String, Object> action = new HashMap<>();
        action.put("integration", WandbIntegrations.webhookNode(webhook.id(), webhook.name(), webhook.url()));
        action.put("requestPayload", view.payload());
        return action;
    }

    // ---------------------------------------------------------------- changes

    private Map<String, Object> create(DataFetchingEnvironment env) {
        Map<String, Object> input = env.getArgument("input");
        Scoped scoped = scoped((String) input.get("scopeType"), (String) input.get("scopeID"));
        var event = WandbEventFilters.event((String) input.get("triggeringEventType"));
        Conditions conditions = WandbEventFilters.parse(event, (String) input.get("eventFilter"));
        Action action = action((String) input.get("triggeredActionType"), input.get("triggeredActionConfig"));
        Draft draft = new Draft((String) input.get("name"), (String) input.get("description"), event,
                conditions.aliasRegex(), emptyToNull(conditions.runCreator()), emptyToNull(conditions.runNameRegex()),
                conditions.threshold(), conditions.change(), conditions.runStates(), action.team(), action.webhookId(),
                action.payload(), action.granted(), (Boolean) input.get("enabled"), conditions.zscore(),
                scoped.collection(), conditions.tagRegex(), emptyToNull(conditions.runDisplayNameRegex()),
                action.action(), null, action.notification());
        limits(draft);
        return payload(automations.create(scoped.scope(), draft), input);
    }

    private Map<String, Object> update(DataFetchingEnvironment env) {
        Map<String, Object> input = env.getArgument("input");
        long id = automationId((String) input.get("id"));
        ScopeRef scope = automations.scopeOf(id);
        AutomationView stored = automations.get(scope, id);
        if (input.get("scopeID") != null) {
            Scoped given = scoped((String) input.get("scopeType"), (String) input.get("scopeID"));
            if (!java.util.Objects.equals(given.scope().projectId(), scope.projectId())
                    || !java.util.Objects.equals(given.scope().registryId(), scope.registryId())
                    || !java.util.Objects.equals(given.collection(), stored.condition().collection())) {
                throw ApiException.invalid(Violation.of("The scope of an automation cannot change", "immutable", "body",
                        "input", "scopeID"));
            }
        }
        var event = input.get("triggeringEventType") == null ? stored.event()
                : WandbEventFilters.event((String) input.get("triggeringEventType"));
        Conditions conditions = input.get("eventFilter") == null ? null
                : WandbEventFilters.parse(event, (String) input.get("eventFilter"));
        Action action = input.get("triggeredActionConfig") == null && input.get("triggeredActionType") == null ? null
                : action((String) input.get("triggeredActionType"), input.get("triggeredActionConfig"));
        Draft changes = new Draft((String) input.get("name"), (String) input.get("description"), event,
                conditions == null ? null : conditions.aliasRegex(),
                conditions == null ? null : conditions.runCreator(),
                conditions == null ? null : conditions.runNameRegex(),
                conditions == null ? null : conditions.threshold(), conditions == null ? null : conditions.change(),
                conditions == null ? null : conditions.runStates(), action == null ? null : action.team(),
                action == null ? null : action.webhookId(), action == null ? null : action.payload(),
                action == null ? null : action.granted(), (Boolean) input.get("enabled"),
                conditions == null ? null : conditions.zscore(), null,
                conditions == null ? null : orEmpty(conditions.tagRegex(), event),
                conditions == null ? null : conditions.runDisplayNameRegex(), action == null ? null : action.action(),
                null, action == null ? null : action.notification());
        limits(changes);
        return payload(automations.update(scope, id, changes), input);
    }

    private Map<String, Object> delete(DataFetchingEnvironment env) {
        Map<String, Object> input = env.getArgument("input");
        long id = automationId((String) input.get("triggerID"));
        ScopeRef scope = automations.scopeOf(id);
        // the SDK's delete has no confirmation: the automation's own name confirms it
        automations.delete(scope, id, automations.get(scope, id).name());
        Map<String, Object> payload = new HashMap<>();
        payload.put("success", true);
        payload.put("clientMutationId", input.get("clientMutationId"));
        return payload;
    }

    private static Map<String, Object> payload(AutomationView view, Map<String, Object> input) {
        Map<String, Object> payload = new HashMap<>();
        payload.put("trigger", new TriggerNode(view));
        payload.put("clientMutationId", input.get("clientMutationId"));
        return payload;
    }

    /**
     * A webhook action (the webhook's team and id, the payload and the team secrets it names: its grants), or the SDK's
     * {@code DoNothing} (none of them).
     */
    private record Action(String team, Long webhookId, String payload, List<String> granted, AutomationAction action,
            Notification notification) {

        Action(String team, Long webhookId, String payload, List<String> granted, AutomationAction action) {
            this(team, webhookId, payload, granted, action, null);
        }
    }

    @SuppressWarnings("unchecked")
    private Action action(String type, Object config) {
        Map<String, Object> given = config == null ? Map.of() : (Map<String, Object>) config;
        for (Map.Entry<String, Object> other : given.entrySet()) {
            if (other.getValue() != null && !"genericWebhookActionInput".equals(other.getKey())
                    && !"noOpActionInput".equals(other.getKey()) && !"notificationActionInput".equals(other.getKey())) {
                throw ApiException.invalid(Violation.of(
                        "Fulcrum's automations send webhooks, Slack notifications or nothing; " + other.getKey()
                                + " is not offered",
                        "value_error", "body", "input", "triggeredActionConfig", other.getKey()));
            }
        }
        Map<String, Object> notification = (Map<String, Object>) given.get("notificationActionInput");
        if ("NOTIFICATION".equals(type) && notification != null && given.get("genericWebhookActionInput") == null
                && given.get("noOpActionInput") == null) {
            long id = decode((String) notification.get("integrationID"), "Integration", "integrationID");
            SlackIntegrations.SlackIntegration integration = slack.shown(id);
            return new Action(integration.team(), id, null, List.of(), AutomationAction.NOTIFICATION,
                    new Notification(orEmpty((String) notification.get("title")),
                            orEmpty((String) notification.get("message")),
                            notification.get("severity") == null ? "INFO" : notification.get("severity").toString()));
        }
        if ("NO_OP".equals(type) && given.get("noOpActionInput") != null
                && given.get("genericWebhookActionInput") == null) {
            return new Action(null, null, null, null, AutomationAction.DO_NOTHING);
        }
        Map<String, Object> webhook = (Map<String, Object>) given.get("genericWebhookActionInput");
        if (!"GENERIC_WEBHOOK".equals(type) || webhook == null || given.get("noOpActionInput") != null
                || notification != null) {
            throw ApiException.invalid(Violation.of(
                    "Fulcrum's automations send webhooks (triggeredActionType GENERIC_WEBHOOK with "
                            + "genericWebhookActionInput), Slack notifications (NOTIFICATION with "
                            + "notificationActionInput) or do nothing (NO_OP with noOpActionInput), not " + type,
                    "value_error", "body", "input", "triggeredActionType"));
        }
        long id = decode((String) webhook.get("integrationID"), "Integration", "integrationID");
        Webhooks.Shown shown = webhooks.shown(id);
        String payload = (String) webhook.get("requestPayload");
        Set<String> granted = new TreeSet<>();
        if (payload != null) {
            limit(payload, 65_536, "triggeredActionConfig", "genericWebhookActionInput", "requestPayload");
            Set<String> own = webhooks.payloadSecretNames(id);
            for (String variable : PayloadTemplate.parse(payload, "body", "input", "triggeredActionConfig",
                    "genericWebhookActionInput", "requestPayload").variables()) {
                if (SECRET.matcher(variable).matches() && !own.contains(variable)
                        && !Webhooks.ACCESS_TOKEN.equals(variable)) {
                    granted.add(variable);
                }
            }
        }
        return new Action(shown.team(), id, payload, List.copyOf(granted), AutomationAction.WEBHOOKS);
    }

    /** A project or registry the caller administers and, for a collection's scope, the collection's name. */
    private record Scoped(ScopeRef scope, String collection) {
    }

    /**
     * The project or registry a scope of the SDK names, the caller must administer it; a collection scope is its
     * project's (or registry's) automation on that collection's versions.
     */
    private Scoped scoped(String type, String id) {
        if ("ARTIFACT_COLLECTION".equals(type)) {
            WandbArtifactNodes.CollectionNode collection = WandbArtifactNodes.CollectionNode.parse(id);
            if (collection == null) {
                throw ApiException.invalid(Violation.of("Not the id of a collection of this server: " + id,
                        "value_error", "body", "input", "scopeID"));
            }
            return new Scoped(collection.registry() != null ? automations.registry(collection.registry())
                    : automations.project(collection.entity(), collection.project()), collection.name());
        }
        return new Scoped(scope(type, id), null);
    }

    /** The project or registry a scope of the SDK names; the caller must administer it. */
    private ScopeRef scope(String type, String id) {
        if (!"PROJECT".equals(type)) {
            throw ApiException.invalid(Violation.of(
                    "Fulcrum's automations watch a project, a registry or a collection of either (scopeType PROJECT "
                            + "or ARTIFACT_COLLECTION), not " + type,
                    "value_error", "body", "input", "scopeType"));
        }
        String key = decodeText(id, "Project", "scopeID");
        if (key.startsWith("registry:")) {
            Registry registry = Registry.findById(number(key.substring("registry:".length()), "scopeID"));
            if (registry == null) {
                throw ApiException.notFound("Registry not found");
            }
            return automations.registry(registry.name);
        }
        dev.fulcrum.accounts.Project project = dev.fulcrum.accounts.Project.findById(number(key, "scopeID"));
        if (project == null) {
            throw ApiException.notFound("Project not found");
        }
        PlatformEntity entity = PlatformEntity.findById(project.entityId);
        return automations.project(entity.name, project.name);
    }

    /** What the REST contract bounds of each field alone (its bean validation), for the fields the SDK sends. */
    private static void limits(Draft draft) {
        if (draft.name() != null && (draft.name().isEmpty() || draft.name().length() > 128)) {
            throw ApiException
                    .invalid(Violation.of("Must be 1 to 128 characters", "string_too_long", "body", "input", "name"));
        }
        limit(draft.description(), 4096, "description");
        String metric = draft.threshold() != null ? draft.threshold().metric()
                : draft.change() != null ? draft.change().metric()
                        : draft.zscore() != null ? draft.zscore().metric() : null;
        limit(metric, 256, "eventFilter");
        limit(draft.runCreator(), 128, "eventFilter");
    }

    private static void limit(String value, int max, String... field) {
        if (value != null && value.length() > max) {
            Object[] loc = new Object[field.length + 2];
            loc[0] = "body";
            loc[1] = "input";
            System.arraycopy(field, 0, loc, 2, field.length);
            throw ApiException.invalid(Violation.of("At most " + max + " characters", "string_too_long", loc));
        }
    }

    static String triggerId(long id) {
        return WandbNodes.opaque("Trigger", Long.toString(id));
    }

    private static long automationId(String id) {
        return decode(id, "Trigger", "id");
    }

    private static long decode(String id, String type, String field) {
        return number(decodeText(id, type, field), field);
    }

    /** What follows {@code type:} in an opaque id of that type; 422 naming {@code field} for anything else. */
    private static String decodeText(String id, String type, String field) {
        String text = null;
        try {
            text = id == null ? null : new String(Base64.getDecoder().decode(id), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            // answered below
        }
        if (text == null || !text.startsWith(type + ":")) {
            throw ApiException.invalid(Violation.of("Not the id of a " + type + " of this server: " + id, "value_error",
                    "body", "input", field));
        }
        return text.substring(type.length() + 1);
    }

    private static long number(String text, String field) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw ApiException.invalid(Violation.of("Not an id of this server", "value_error", "body", "input", field));
        }
    }

    /** A tag event's filter replaces its tag regex: none given clears it (""). */
    private static String orEmpty(String value, dev.fulcrum.automations.TriggerEvent event) {
        return value == null && event.isTagEvent() ? "" : value;
    }

    private static String orEmpty(String value) {
        return value == null ? "" : value;
    }

    private static String emptyToNull(String value) {
        return value == null || value.isEmpty() ? null : value;
    }
}
