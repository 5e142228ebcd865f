package dev.fulcrum.automations;

import java.util.ArrayList;
import java.util.List;

import dev.fulcrum.automations.AutomationCondition.Aggregation;
import dev.fulcrum.automations.AutomationCondition.Change;
import dev.fulcrum.automations.AutomationCondition.Threshold;
import dev.fulcrum.automations.AutomationCondition.WeaveMetric;
import dev.fulcrum.automations.AutomationCondition.ZScore;
import dev.fulcrum.automations.Automations.AutomationView;
import dev.fulcrum.automations.Automations.Draft;
import dev.fulcrum.automations.api.model.Automation;
import dev.fulcrum.automations.api.model.AutomationActionType;
import dev.fulcrum.automations.api.model.AutomationAggregation;
import dev.fulcrum.automations.api.model.AutomationCreate;
import dev.fulcrum.automations.api.model.AutomationEvent;
import dev.fulcrum.automations.api.model.AutomationLastDelivery;
import dev.fulcrum.automations.api.model.AutomationList;
import dev.fulcrum.automations.api.model.AutomationMetricChange;
import dev.fulcrum.automations.api.model.AutomationMetricThreshold;
import dev.fulcrum.automations.api.model.AutomationMetricZscore;
import dev.fulcrum.automations.api.model.AutomationNotification;
import dev.fulcrum.automations.api.model.AutomationRunFilter;
import dev.fulcrum.automations.api.model.AutomationScope;
import dev.fulcrum.automations.api.model.AutomationUpdate;
import dev.fulcrum.automations.api.model.AutomationWeaveMetric;
import dev.fulcrum.automations.api.model.WebhookDeliveryState;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/** Automations between API models and the service's drafts and views. */
final class AutomationMapper {

    private AutomationMapper() {
    }

    static Draft toDraft(AutomationCreate body) {
        AutomationRunFilter filter = body.getRunFilter();
        return new Draft(body.getName(), body.getDescription(),
                body.getEvent() == null ? null : TriggerEvent.valueOf(body.getEvent().name()), body.getAliasRegex(),
                filter == null ? null : filter.getCreator(), filter == null ? null : filter.getNameRegex(),
                threshold(body.getMetricThreshold()), change(body.getMetricChange()),
                states(body.getRunStates() == null ? null : body.getRunStates().stream().map(s -> s.value()).toList()),
                body.getTeam(), target(body.getWebhookId(), body.getSlackIntegrationId()), body.getPayload(),
                body.getGrantedSecrets(), body.getEnabled(), zscore(body.getMetricZscore()), body.getCollection(),
                body.getTagRegex(), filter == null ? null : filter.getDisplayNameRegex(), action(body.getActionType()),
                weaveMetric(body.getWeaveMetric()), notification(body.getNotification()));
    }

    static Draft toDraft(AutomationUpdate body) {
        AutomationRunFilter filter = body.getRunFilter();
        return new Draft(body.getName(), body.getDescription(),
                body.getEvent() == null ? null : TriggerEvent.valueOf(body.getEvent().name()), body.getAliasRegex(),
                // a given run_filter replaces all its filters; {} clears them
                filter == null ? null : orEmpty(filter.getCreator()),
                filter == null ? null : orEmpty(filter.getNameRegex()), threshold(body.getMetricThreshold()),
                change(body.getMetricChange()),
                states(body.getRunStates() == null ? null : body.getRunStates().stream().map(s -> s.value()).toList()),
                body.getTeam(), target(body.getWebhookId(), body.getSlackIntegrationId()), body.getPayload(),
                body.getGrantedSecrets(), body.getEnabled(), zscore(body.getMetricZscore()), body.getCollection(),
                body.getTagRegex(), filter == null ? null : orEmpty(filter.getDisplayNameRegex()),
                action(body.getActionType()), weaveMetric(body.getWeaveMetric()), notification(body.getNotification()));
    }

    private static WeaveMetric weaveMetric(AutomationWeaveMetric given) {
        if (given == null) {
            return null;
        }
        List<Violation> missing = new ArrayList<>();
        require(given.getOpName(), missing, "weave_metric", "op_name");
        require(given.getMetric(), missing, "weave_metric", "metric");
        require(given.getComparison(), missing, "weave_metric", "comparison");
        require(given.getThreshold(), missing, "weave_metric", "threshold");
        if (!missing.isEmpty()) {
            throw ApiException.invalid(missing);
        }
        // no window: the last value
        Integer window = given.getWindow() == null && given.getWindowSeconds() == null ? Integer.valueOf(1)
                : given.getWindow();
        return new WeaveMetric(given.getOpName(), given.getMetric(), aggregation(given.getAggregation()), window,
                given.getWindowSeconds(), given.getComparison().value(), given.getThreshold());
    }

    private static AutomationAction action(AutomationActionType given) {
        return given == null ? null : switch (given) {
            case DO_NOTHING -> AutomationAction.DO_NOTHING;
            case SLACK_NOTIFICATION -> AutomationAction.NOTIFICATION;
            default -> AutomationAction.WEBHOOKS;
        };
    }

    private static AutomationActionType actionType(AutomationAction action) {
        return switch (action) {
            case DO_NOTHING -> AutomationActionType.DO_NOTHING;
            case NOTIFICATION -> AutomationActionType.SLACK_NOTIFICATION;
            default -> AutomationActionType.WEBHOOKS;
        };
    }

    /**
     * Where the automation sends: its webhook or its Slack integration (the service keeps either as the automation's
     * webhook, a row of its kind); both given: 422.
     */
    private static Long target(Long webhookId, Long slackIntegrationId) {
        if (webhookId != null && slackIntegrationId != null) {
            throw ApiException.invalid(
                    Violation.of("Give webhook_id (Webhooks) or slack_integration_id (SlackNotification), not both",
                            "extra_forbidden", "body", "slack_integration_id"));
        }
        return webhookId != null ? webhookId : slackIntegrationId;
    }

    private static Notification notification(AutomationNotification given) {
        return given == null ? null
                : new Notification(given.getTitle() == null ? "" : given.getTitle(),
                        given.getMessage() == null ? "" : given.getMessage(),
                        given.getSeverity() == null ? "INFO" : given.getSeverity().value());
    }

    private static String orEmpty(String value) {
        return value == null ? "" : value;
    }

    private static List<String> states(List<String> states) {
        return states == null ? null : new ArrayList<>(new java.util.TreeSet<>(states));
    }

    private static Threshold threshold(AutomationMetricThreshold given) {
        if (given == null) {
            return null;
        }
        List<Violation> missing = new ArrayList<>();
        require(given.getMetric(), missing, "metric_threshold", "metric");
        require(given.getComparison(), missing, "metric_threshold", "comparison");
        require(given.getThreshold(), missing, "metric_threshold", "threshold");
        if (!missing.isEmpty()) {
            throw ApiException.invalid(missing);
        }
        return new Threshold(given.getMetric(), aggregation(given.getAggregation()),
                given.getWindow() == null ? 1 : given.getWindow(), given.getComparison().value(), given.getThreshold());
    }

    private static Change change(AutomationMetricChange given) {
        if (given == null) {
            return null;
        }
        List<Violation> missing = new ArrayList<>();
        require(given.getMetric(), missing, "metric_change", "metric");
        require(given.getAmount(), missing, "metric_change", "amount");
        if (!missing.isEmpty()) {
            throw ApiException.invalid(missing);
        }
        return new Change(given.getMetric(), aggregation(given.getAggregation()),
                given.getWindow() == null ? 1 : given.getWindow(),
                given.getChangeType() == AutomationMetricChange.ChangeTypeEnum.RELATIVE,
                given.getDirection() == null ? "ANY" : given.getDirection().value(), given.getAmount());
    }

    private static ZScore zscore(AutomationMetricZscore given) {
        if (given == null) {
            return null;
        }
        if (given.getMetric() == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", "metric_zscore", "metric"));
        }
        return new ZScore(given.getMetric(), given.getWindow() == null ? 30 : given.getWindow(),
                given.getThreshold() == null ? 3 : given.getThreshold(),
                given.getDirection() == null ? "ANY" : given.getDirection().value());
    }

    private static Aggregation aggregation(AutomationAggregation given) {
        return given == null ? Aggregation.AVERAGE : Aggregation.valueOf(given.name());
    }

    private static void require(Object value, List<Violation> missing, String... field) {
        if (value == null) {
            missing.add(Violation.of("Field required", "missing", "body", field[0], field[1]));
        }
    }

    static AutomationList toList(List<AutomationView> views) {
        return new AutomationList().automations(views.stream().map(AutomationMapper::toAutomation).toList());
    }

    static Automation toAutomation(AutomationView view) {
        Automations.ScopeRef scope = view.scope();
        AutomationScope apiScope = scope.isRegistry()
                ? new AutomationScope().type(AutomationScope.TypeEnum.REGISTRY).registry(scope.registry())
                : new AutomationScope().type(AutomationScope.TypeEnum.PROJECT).entity(scope.entity())
                        .project(scope.project());
        AutomationCondition condition = view.condition();
        Automation automation = new Automation().id(view.id()).name(view.name()).description(view.description())
                .scope(apiScope).event(AutomationEvent.fromValue(view.event().name()))
                .aliasRegex(condition.aliasRegex()).collection(condition.collection()).tagRegex(condition.tagRegex())
                .team(view.team()).actionType(actionType(view.action()))
                .webhookId(view.action() == AutomationAction.WEBHOOKS ? view.webhookId() : null)
                .slackIntegrationId(view.action() == AutomationAction.NOTIFICATION ? view.webhookId() : null)
                .lastFiredAt(view.lastFiredAt()).payload(view.webhookPayload()).grantedSecrets(view.grantedSecrets())
                .enabled(view.enabled()).disabledReason(view.disabledReason()).actsAs(view.actsAs())
                .createdBy(view.createdBy()).createdAt(view.createdAt()).updatedAt(view.updatedAt());
        Notification notification = view.notification();
        if (notification != null) {
            automation.notification(
                    new AutomationNotification().title(notification.title()).message(notification.message())
                            .severity(AutomationNotification.SeverityEnum.fromValue(notification.severity())));
        }
        if (view.lastDelivery() != null) {
            Automations.LastDelivery last = view.lastDelivery();
            automation.lastDelivery(
                    new AutomationLastDelivery().id(last.id()).state(WebhookDeliveryState.fromValue(last.state()))
                            .createdAt(last.createdAt()).completedAt(last.completedAt()));
        }
        if (condition.runCreator() != null || condition.runNameRegex() != null
                || condition.runDisplayNameRegex() != null) {
            automation.runFilter(new AutomationRunFilter().creator(condition.runCreator())
                    .nameRegex(condition.runNameRegex()).displayNameRegex(condition.runDisplayNameRegex()));
        }
        if (condition.threshold() != null) {
            Threshold t = condition.threshold();
            automation.metricThreshold(new AutomationMetricThreshold().metric(t.metric())
                    .aggregation(AutomationAggregation.fromValue(t.aggregation().name())).window(t.window())
                    .comparison(AutomationMetricThreshold.ComparisonEnum.fromValue(t.comparison()))
                    .threshold(t.threshold()));
        }
        if (condition.change() != null) {
            Change c = condition.change();
            automation.metricChange(new AutomationMetricChange().metric(c.metric())
                    .aggregation(AutomationAggregation.fromValue(c.aggregation().name())).window(c.window())
                    .changeType(c.relative() ? AutomationMetricChange.ChangeTypeEnum.RELATIVE
                            : AutomationMetricChange.ChangeTypeEnum.ABSOLUTE)
                    .direction(AutomationMetricChange.DirectionEnum.fromValue(c.direction())).amount(c.amount()));
        }
        if (condition.zscore() != null) {
            ZScore z = condition.zscore();
            automation.metricZscore(new AutomationMetricZscore().metric(z.metric()).window(z.window())
                    .threshold(z.threshold()).direction(AutomationMetricZscore.DirectionEnum.fromValue(z.direction())));
        }
        if (condition.weaveMetric() != null) {
            WeaveMetric w = condition.weaveMetric();
            automation.weaveMetric(new AutomationWeaveMetric().opName(w.op()).metric(w.metric())
                    .aggregation(AutomationAggregation.fromValue(w.aggregation().name())).window(w.lastValues())
                    .windowSeconds(w.seconds())
                    .comparison(AutomationWeaveMetric.ComparisonEnum.fromValue(w.comparison()))
                    .threshold(w.threshold()));
        }
        if (view.event() == TriggerEvent.RUN_STATE) {
            automation
                    .runStates(condition.runStates().isEmpty() ? List.of("failed", "finished") : condition.runStates());
        }
        return automation;
    }
}
