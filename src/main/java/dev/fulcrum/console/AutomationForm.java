package dev.fulcrum.console;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.jboss.resteasy.reactive.RestForm;

import dev.fulcrum.automations.api.model.Automation;
import dev.fulcrum.automations.api.model.AutomationActionType;
import dev.fulcrum.automations.api.model.AutomationAggregation;
import dev.fulcrum.automations.api.model.AutomationCreate;
import dev.fulcrum.automations.api.model.AutomationEvent;
import dev.fulcrum.automations.api.model.AutomationMetricChange;
import dev.fulcrum.automations.api.model.AutomationMetricThreshold;
import dev.fulcrum.automations.api.model.AutomationMetricZscore;
import dev.fulcrum.automations.api.model.AutomationNotification;
import dev.fulcrum.automations.api.model.AutomationRunFilter;
import dev.fulcrum.automations.api.model.AutomationUpdate;
import dev.fulcrum.automations.api.model.AutomationWeaveMetric;

/**
 * The automation form as the browser sends it (field names are the API's), turned into the API's create or update
 * request with only the fields of the chosen event; also what the form shows again after the API refused it.
 */
public class AutomationForm {

    @RestForm
    public String name = "";
    @RestForm
    public String description = "";
    @RestForm
    public String event = "";
    @RestForm("alias_regex")
    public String aliasRegex = "";
    @RestForm
    public String collection = "";
    @RestForm("tag_regex")
    public String tagRegex = "";
    @RestForm("run_creator")
    public String runCreator = "";
    @RestForm("run_name_regex")
    public String runNameRegex = "";
    @RestForm("run_display_name_regex")
    public String runDisplayNameRegex = "";
    @RestForm("run_states")
    public List<String> runStates = new ArrayList<>();
    @RestForm("threshold_metric")
    public String thresholdMetric = "";
    @RestForm("threshold_aggregation")
    public String thresholdAggregation = "AVERAGE";
    @RestForm("threshold_window")
    public String thresholdWindow = "1";
    @RestForm("threshold_comparison")
    public String thresholdComparison = ">";
    @RestForm("threshold_value")
    public String thresholdValue = "";
    @RestForm("change_metric")
    public String changeMetric = "";
    @RestForm("change_aggregation")
    public String changeAggregation = "AVERAGE";
    @RestForm("change_window")
    public String changeWindow = "1";
    @RestForm("change_type")
    public String changeType = "ABSOLUTE";
    @RestForm("change_direction")
    public String changeDirection = "ANY";
    @RestForm("change_amount")
    public String changeAmount = "";
    @RestForm("zscore_metric")
    public String zscoreMetric = "";
    @RestForm("zscore_window")
    public String zscoreWindow = "30";
    @RestForm("zscore_threshold")
    public String zscoreThreshold = "3";
    @RestForm("zscore_direction")
    public String zscoreDirection = "ANY";
    @RestForm("weave_op")
    public String weaveOp = "";
    @RestForm("weave_metric")
    public String weaveMetric = "";
    @RestForm("weave_aggregation")
    public String weaveAggregation = "AVERAGE";
    /** {@code values} or {@code seconds}: what {@link #weaveWindow} counts */
    @RestForm("weave_window_unit")
    public String weaveWindowUnit = "values";
    @RestForm("weave_window")
    public String weaveWindow = "10";
    @RestForm("weave_comparison")
    public String weaveComparison = ">";
    @RestForm("weave_threshold")
    public String weaveThreshold = "";
    /** {@code team:webhookId}, from the webhook picker */
    @RestForm
    public String target = "";
    @RestForm
    public String team = "";
    @RestForm("webhook_id")
    public String webhookId = "";
    @RestForm
    public String payload = "";
    @RestForm("granted_secrets")
    public String grantedSecrets = "";
    @RestForm
    public String enabled;
    @RestForm("action_type")
    public String actionType = "Webhooks";
    /** {@code team:integrationId}, from the Slack integration picker */
    @RestForm("slack_target")
    public String slackTarget = "";
    @RestForm("notification_title")
    public String notificationTitle = "";
    @RestForm("notification_message")
    public String notificationMessage = "";
    @RestForm("notification_severity")
    public String notificationSeverity = "INFO";

    static AutomationForm blank(String event) {
        AutomationForm form = new AutomationForm();
        form.event = event == null ? "" : event;
        form.enabled = "on";
        return form;
    }

    static AutomationForm of(Automation automation) {
        AutomationForm form = new AutomationForm();
        form.name = automation.getName();
        form.description = orEmpty(automation.getDescription());
        form.event = automation.getEvent().toString();
        form.aliasRegex = orEmpty(automation.getAliasRegex());
        form.collection = orEmpty(automation.getCollection());
        form.tagRegex = orEmpty(automation.getTagRegex());
        if (automation.getRunFilter() != null) {
            form.runCreator = orEmpty(automation.getRunFilter().getCreator());
            form.runNameRegex = orEmpty(automation.getRunFilter().getNameRegex());
            form.runDisplayNameRegex = orEmpty(automation.getRunFilter().getDisplayNameRegex());
        }
        form.runStates = automation.getRunStates() == null ? new ArrayList<>()
                : new ArrayList<>(automation.getRunStates());
        AutomationMetricThreshold threshold = automation.getMetricThreshold();
        if (threshold != null) {
            form.thresholdMetric = threshold.getMetric();
            form.thresholdAggregation = String.valueOf(threshold.getAggregation());
            form.thresholdWindow = String.valueOf(threshold.getWindow());
            form.thresholdComparison = threshold.getComparison().toString();
            form.thresholdValue = String.valueOf(threshold.getThreshold());
        }
        AutomationMetricChange change = automation.getMetricChange();
        if (change != null) {
            form.changeMetric = change.getMetric();
            form.changeAggregation = String.valueOf(change.getAggregation());
            form.changeWindow = String.valueOf(change.getWindow());
            form.changeType = String.valueOf(change.getChangeType());
            form.changeDirection = String.valueOf(change.getDirection());
            form.changeAmount = String.valueOf(change.getAmount());
        }
        AutomationMetricZscore zscore = automation.getMetricZscore();
        if (zscore != null) {
            form.zscoreMetric = zscore.getMetric();
            form.zscoreWindow = String.valueOf(zscore.getWindow());
            form.zscoreThreshold = String.valueOf(zscore.getThreshold());
            form.zscoreDirection = String.valueOf(zscore.getDirection());
        }
        AutomationWeaveMetric weave = automation.getWeaveMetric();
        if (weave != null) {
            form.weaveOp = weave.getOpName();
            form.weaveMetric = weave.getMetric();
            form.weaveAggregation = String.valueOf(weave.getAggregation());
            form.weaveWindowUnit = weave.getWindowSeconds() != null ? "seconds" : "values";
            form.weaveWindow = String
                    .valueOf(weave.getWindowSeconds() != null ? weave.getWindowSeconds() : weave.getWindow());
            form.weaveComparison = weave.getComparison().toString();
            form.weaveThreshold = String.valueOf(weave.getThreshold());
        }
        form.actionType = automation.getActionType().toString();
        if (automation.getSlackIntegrationId() != null) {
            form.slackTarget = automation.getTeam() + ":" + automation.getSlackIntegrationId();
        }
        if (automation.getNotification() != null) {
            form.notificationTitle = orEmpty(automation.getNotification().getTitle());
            form.notificationMessage = orEmpty(automation.getNotification().getMessage());
            form.notificationSeverity = String.valueOf(automation.getNotification().getSeverity());
        }
        if (automation.getWebhookId() != null) {
            form.team = automation.getTeam();
            form.webhookId = String.valueOf(automation.getWebhookId());
            form.target = automation.getTeam() + ":" + automation.getWebhookId();
        }
        form.payload = orEmpty(automation.getPayload());
        form.grantedSecrets = String.join(", ", automation.getGrantedSecrets());
        form.enabled = Boolean.TRUE.equals(automation.getEnabled()) ? "on" : null;
        return form;
    }

    public boolean isEnabledChecked() {
        return enabled != null;
    }

    public boolean runState(String state) {
        return runStates != null && runStates.contains(state);
    }

    AutomationCreate create() {
        AutomationEvent chosen = event();
        AutomationCreate create = new AutomationCreate().name(name).description(Pages.blankToNull(description))
                .event(chosen).actionType(action()).enabled(enabled != null);
        if (action() == AutomationActionType.WEBHOOKS) {
            create.team(team()).webhookId(webhookId()).payload(Pages.blankToNull(payload)).grantedSecrets(granted());
        } else if (action() == AutomationActionType.SLACK_NOTIFICATION) {
            create.team(slackTeam()).slackIntegrationId(slackIntegrationId()).notification(notification());
        }
        switch (chosen) {
            case ADD_ARTIFACT_ALIAS -> create.aliasRegex(aliasRegex).collection(Pages.blankToNull(collection));
            case ADD_ARTIFACT_TAG, REMOVE_ARTIFACT_TAG, ADD_COLLECTION_TAG, REMOVE_COLLECTION_TAG ->
                    create.tagRegex(Pages.blankToNull(tagRegex)).collection(Pages.blankToNull(collection));
            case LINK_ARTIFACT, UNLINK_ARTIFACT, CREATE_ARTIFACT -> create.collection(Pages.blankToNull(collection));
            case RUN_METRIC_THRESHOLD -> create.runFilter(runFilter()).metricThreshold(threshold());
            case RUN_METRIC_CHANGE -> create.runFilter(runFilter()).metricChange(change());
            case RUN_METRIC_ZSCORE -> create.runFilter(runFilter()).metricZscore(zscore());
            case RUN_STATE -> create.runFilter(runFilter())
                    .runStates(runStates().stream().map(AutomationCreate.RunStatesEnum::fromValue).toList());
            case WEAVE_METRIC_THRESHOLD -> create.weaveMetric(weave());
            default -> {
            }
        }
        return create;
    }

    AutomationUpdate update() {
        AutomationEvent chosen = event();
        AutomationUpdate update = new AutomationUpdate().name(name).description(description).actionType(action())
                .enabled(enabled != null);
        if (action() == AutomationActionType.WEBHOOKS) {
            update.team(team()).webhookId(webhookId()).payload(payload).grantedSecrets(granted());
        } else if (action() == AutomationActionType.SLACK_NOTIFICATION) {
            update.team(slackTeam()).slackIntegrationId(slackIntegrationId()).notification(notification());
        }
        switch (chosen) {
            case ADD_ARTIFACT_ALIAS -> update.aliasRegex(aliasRegex).collection(collection);
            case ADD_ARTIFACT_TAG, REMOVE_ARTIFACT_TAG, ADD_COLLECTION_TAG, REMOVE_COLLECTION_TAG ->
                    update.tagRegex(tagRegex).collection(collection);
            case LINK_ARTIFACT, UNLINK_ARTIFACT, CREATE_ARTIFACT -> update.collection(collection);
            case RUN_METRIC_THRESHOLD -> update.runFilter(runFilter()).metricThreshold(threshold());
            case RUN_METRIC_CHANGE -> update.runFilter(runFilter()).metricChange(change());
            case RUN_METRIC_ZSCORE -> update.runFilter(runFilter()).metricZscore(zscore());
            case RUN_STATE -> update.runFilter(runFilter())
                    .runStates(runStates().stream().map(AutomationUpdate.RunStatesEnum::fromValue).toList());
            case WEAVE_METRIC_THRESHOLD -> update.weaveMetric(weave());
            default -> {
            }
        }
        return update;
    }

    private AutomationActionType action() {
        try {
            return AutomationActionType.fromValue(actionType == null || actionType.isBlank() ? "Webhooks" : actionType);
        } catch (IllegalArgumentException e) {
            throw new Pages.FormException("action_type", "Choose what the automation does");
        }
    }

    private AutomationEvent event() {
        try {
            return AutomationEvent.fromValue(event);
        } catch (IllegalArgumentException e) {
            throw new Pages.FormException("event", "Choose the event to watch");
        }
    }

    private List<String> runStates() {
        return runStates == null ? List.of() : runStates;
    }

    private String team() {
        if (target != null && target.contains(":")) {
            return target.substring(0, target.lastIndexOf(':'));
        }
        return team;
    }

    private String slackTeam() {
        if (slackTarget == null || !slackTarget.contains(":")) {
            throw new Pages.FormException("slack_integration_id", "Choose a Slack integration");
        }
        return slackTarget.substring(0, slackTarget.lastIndexOf(':'));
    }

    private Long slackIntegrationId() {
        slackTeam();
        return Pages.number("slack_integration_id", slackTarget.substring(slackTarget.lastIndexOf(':') + 1));
    }

    private AutomationNotification notification() {
        AutomationNotification.SeverityEnum severity;
        try {
            severity = AutomationNotification.SeverityEnum.fromValue(
                    notificationSeverity == null || notificationSeverity.isBlank() ? "INFO" : notificationSeverity);
        } catch (IllegalArgumentException e) {
            throw new Pages.FormException("notification.severity", "Choose INFO, WARN or ERROR");
        }
        return new AutomationNotification().title(orEmpty(notificationTitle)).message(orEmpty(notificationMessage))
                .severity(severity);
    }

    private Long webhookId() {
        if (target != null && target.contains(":")) {
            return Pages.number("webhook_id", target.substring(target.lastIndexOf(':') + 1));
        }
        return Pages.number("webhook_id", webhookId);
    }

    private List<String> granted() {
        return grantedSecrets == null ? List.of()
                : Arrays.stream(grantedSecrets.split("[,\\s]+")).filter(s -> !s.isBlank()).toList();
    }

    private AutomationRunFilter runFilter() {
        return new AutomationRunFilter().creator(Pages.blankToNull(runCreator))
                .nameRegex(Pages.blankToNull(runNameRegex)).displayNameRegex(Pages.blankToNull(runDisplayNameRegex));
    }

    private AutomationMetricThreshold threshold() {
        try {
            return new AutomationMetricThreshold().metric(thresholdMetric)
                    .aggregation(AutomationAggregation.fromValue(thresholdAggregation))
                    .window(Math.toIntExact(Pages.number("metric_threshold.window", thresholdWindow)))
                    .comparison(AutomationMetricThreshold.ComparisonEnum.fromValue(thresholdComparison))
                    .threshold(Pages.decimal("metric_threshold.threshold", thresholdValue));
        } catch (IllegalArgumentException | ArithmeticException | NullPointerException e) {
            throw new Pages.FormException("metric_threshold",
                    "Give the metric, aggregation, window, comparison and " + "threshold");
        }
    }

    private AutomationMetricChange change() {
        try {
            return new AutomationMetricChange().metric(changeMetric)
                    .aggregation(AutomationAggregation.fromValue(changeAggregation))
                    .window(Math.toIntExact(Pages.number("metric_change.window", changeWindow)))
                    .changeType(AutomationMetricChange.ChangeTypeEnum.fromValue(changeType))
                    .direction(AutomationMetricChange.DirectionEnum.fromValue(changeDirection))
                    .amount(Pages.decimal("metric_change.amount", changeAmount));
        } catch (IllegalArgumentException | ArithmeticException | NullPointerException e) {
            throw new Pages.FormException("metric_change",
                    "Give the metric, aggregation, window, change type, " + "direction and amount");
        }
    }

    private AutomationMetricZscore zscore() {
        try {
            return new AutomationMetricZscore().metric(zscoreMetric)
                    .window(Math.toIntExact(Pages.number("metric_zscore.window", zscoreWindow)))
                    .threshold(Pages.decimal("metric_zscore.threshold", zscoreThreshold))
                    .direction(AutomationMetricZscore.DirectionEnum.fromValue(zscoreDirection));
        } catch (IllegalArgumentException | ArithmeticException | NullPointerException e) {
            throw new Pages.FormException("metric_zscore", "Give the metric, window, threshold and direction");
        }
    }

    private AutomationWeaveMetric weave() {
        try {
            int window = Math.toIntExact(Pages.number("weave_metric.window", weaveWindow));
            AutomationWeaveMetric metric = new AutomationWeaveMetric().opName(weaveOp).metric(weaveMetric)
                    .aggregation(AutomationAggregation.fromValue(weaveAggregation))
                    .comparison(AutomationWeaveMetric.ComparisonEnum.fromValue(weaveComparison))
                    .threshold(Pages.decimal("weave_metric.threshold", weaveThreshold));
            return "seconds".equals(weaveWindowUnit) ? metric.windowSeconds(window) : metric.window(window);
        } catch (IllegalArgumentException | ArithmeticException | NullPointerException e) {
            throw new Pages.FormException("weave_metric",
                    "Give the op, the metric, aggregation, window, comparison and threshold");
        }
    }

    private static String orEmpty(String value) {
        return value == null ? "" : value;
    }
}
