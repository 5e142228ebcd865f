package dev.fulcrum.automations;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

import dev.fulcrum.automations.AutomationCondition.Change;
import dev.fulcrum.automations.AutomationCondition.Threshold;
import dev.fulcrum.automations.AutomationCondition.WeaveMetric;
import dev.fulcrum.automations.AutomationCondition.ZScore;
import dev.fulcrum.automations.Automations.AutomationView;
import dev.fulcrum.automations.Automations.Draft;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.RegularExpressions;

/**
 * The rules an automation's fields follow on their own, apart from what needs the database (its webhook, the secrets of
 * the webhook's team, the caller's rights) and apart from what the contract says of each field alone (required fields,
 * lengths and ranges, checked by bean validation): which fields each event has, its regular expressions and metric
 * conditions, the names of granted secrets, and the variables its payload may use. A broken rule is a 422 naming the
 * field.
 */
final class AutomationRules {

    private AutomationRules() {
    }

    /**
     * The automation an update makes of {@code stored}: the fields given replace the stored ones, the others stay. The
     * run filter is replaced as a whole (giving one of its creator, name regex or display-name regex clears the
     * others); the event cannot change.
     */
    static Draft merge(AutomationView stored, Draft changes) {
        if (changes.event() != null && changes.event() != stored.event()) {
            throw ApiException
                    .invalid(Violation.of("The event of an automation cannot change", "immutable", "body", "event"));
        }
        AutomationCondition was = stored.condition();
        boolean newRunFilter = changes.runCreator() != null || changes.runNameRegex() != null
                || changes.runDisplayNameRegex() != null;
        AutomationAction action = or(changes.action(), stored.action());
        Notification notification = action == AutomationAction.NOTIFICATION
                ? or(changes.notification(), stored.notification())
                : changes.notification();
        if (action == AutomationAction.DO_NOTHING || action != stored.action()) {
            // what the automation sent where goes with its action; what the change gives is checked
            stored = new AutomationView(stored.id(), stored.name(), stored.description(), stored.scope(),
                    stored.event(), was, null, null, null, null, List.of(), stored.enabled(), stored.disabledReason(),
                    stored.actsAs(), stored.createdBy(), stored.createdAt(), stored.updatedAt(), stored.lastDelivery(),
                    stored.action(), stored.lastFiredAt());
        }
        return new Draft(or(changes.name(), stored.name()), or(changes.description(), stored.description()),
                stored.event(), or(changes.aliasRegex(), was.aliasRegex()),
                newRunFilter ? changes.runCreator() : was.runCreator(),
                newRunFilter ? changes.runNameRegex() : was.runNameRegex(), or(changes.threshold(), was.threshold()),
                or(changes.change(), was.change()), or(changes.runStates(), was.runStates()),
                or(changes.team(), stored.team()), or(changes.webhookId(), stored.webhookId()),
                or(changes.payload(), stored.webhookPayload()), or(changes.grantedSecrets(), stored.grantedSecrets()),
                or(changes.enabled(), stored.enabled()), or(changes.zscore(), was.zscore()),
                or(changes.collection(), was.collection()), or(changes.tagRegex(), was.tagRegex()),
                newRunFilter ? changes.runDisplayNameRegex() : was.runDisplayNameRegex(), action,
                or(changes.weaveMetric(), was.weaveMetric()), notification);
    }

    /**
     * Whether the caller of an update takes the automation over (it then acts for them): when it changes what the
     * automation sends where (team, webhook, payload, granted secrets in any order) or enables it.
     */
    static boolean takesOver(AutomationView stored, Draft merged) {
        return merged.enabled() && !stored.enabled() || merged.actionOrWebhooks() != stored.action()
                || !Objects.equals(merged.team(), stored.team())
                || !Objects.equals(merged.webhookId(), stored.webhookId())
                || !Objects.equals(merged.storedPayload(), stored.payload())
                || !new HashSet<>(merged.grantedSecrets()).equals(new HashSet<>(stored.grantedSecrets()));
    }

    /** The granted secrets as stored: without nulls and repeats, sorted. */
    static List<String> grantedSecrets(Draft draft) {
        return draft.grantedSecrets() == null ? List.of()
                : draft.grantedSecrets().stream().distinct().sorted().toList();
    }

    /**
     * Checks the fields of a complete draft (a create, or an update merged with what is stored), in a project or, with
     * {@code inRegistry}, a registry; all broken rules at once.
     */
    static void checkFields(boolean inRegistry, Draft draft) {
        List<Violation> problems = new ArrayList<>();
        String name = draft.name();
        if (name.isBlank()) {
            problems.add(Violation.of("Must not be blank", "value_error", "body", "name"));
        }
        TriggerEvent event = draft.event();
        if (inRegistry && !event.inRegistries()) {
            problems.add(Violation.of("Registry automations watch ADD_ARTIFACT_ALIAS, ADD_ARTIFACT_TAG, "
                    + "REMOVE_ARTIFACT_TAG, ADD_COLLECTION_TAG, REMOVE_COLLECTION_TAG, LINK_ARTIFACT or UNLINK_ARTIFACT, "
                    + "not " + event, "enum", "body", "event"));
        }
        checkEventFields(draft, problems);
        checkAction(draft, problems);
        for (String secret : grantedSecrets(draft)) {
            if (!AutomationVariables.SECRET_NAME.matcher(secret).matches()) {
                problems.add(Violation.of("Secret names are upper-case letters, digits and '_': " + secret,
                        "string_pattern_mismatch", "body", "granted_secrets"));
            }
        }
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems);
        }
    }

    /** The condition a checked draft stores (an empty run filter part is none). */
    static AutomationCondition condition(Draft draft) {
        return AutomationCondition
                .of(draft.aliasRegex(), emptyToNull(draft.runCreator()), emptyToNull(draft.runNameRegex()),
                        draft.threshold(), draft.change(), draft.zscore(), draft.runStates(),
                        emptyToNull(draft.collection()))
                .withTagRegex(emptyToNull(draft.tagRegex()))
                .withRunDisplayNameRegex(emptyToNull(draft.runDisplayNameRegex())).withWeaveMetric(draft.weaveMetric());
    }

    /**
     * Known variables and granted secrets only (<code>${ACCESS_TOKEN}</code> and the webhook's own secrets when it has
     * them); then the payload must render, against a sample event, to JSON. Secret values in the sample are made up:
     * the check never reads a secret.
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

    /**
     * A webhook automation names its team and webhook; one that does nothing names no team, webhook, payload or
     * secrets.
     */
    private static void checkAction(Draft draft, List<Violation> problems) {
        if (draft.actionOrWebhooks() != AutomationAction.NOTIFICATION && draft.notification() != null) {
            problems.add(Violation.of("Only SlackNotification automations have a notification", "extra_forbidden",
                    "body", "notification"));
        }
        if (draft.actionOrWebhooks() == AutomationAction.NOTIFICATION) {
            if (draft.team() == null) {
                problems.add(Violation.of("SlackNotification automations need the team of their Slack integration",
                        "missing", "body", "team"));
            }
            if (draft.webhookId() == null) {
                problems.add(Violation.of("SlackNotification automations need a Slack integration", "missing", "body",
                        "slack_integration_id"));
            }
            if (draft.notification() == null) {
                problems.add(Violation.of("SlackNotification automations need a notification", "missing", "body",
                        "notification"));
            }
            String refused = "SlackNotification automations post their notification: no ";
            if (draft.payload() != null) {
                problems.add(Violation.of(refused + "payload", "extra_forbidden", "body", "payload"));
            }
            if (draft.grantedSecrets() != null && !draft.grantedSecrets().isEmpty()) {
                problems.add(Violation.of(refused + "secrets", "extra_forbidden", "body", "granted_secrets"));
            }
            return;
        }
        if (draft.actionOrWebhooks() == AutomationAction.WEBHOOKS) {
            if (draft.team() == null) {
                problems.add(
                        Violation.of("Webhooks automations need the team of their webhook", "missing", "body", "team"));
            }
            if (draft.webhookId() == null) {
                problems.add(Violation.of("Webhooks automations need a webhook", "missing", "body", "webhook_id"));
            }
            return;
        }
        String refused = "DoNothing automations send nothing: no ";
        if (draft.team() != null) {
            problems.add(Violation.of(refused + "team", "extra_forbidden", "body", "team"));
        }
        if (draft.webhookId() != null) {
            problems.add(Violation.of(refused + "webhook", "extra_forbidden", "body", "webhook_id"));
        }
        if (draft.payload() != null) {
            problems.add(Violation.of(refused + "payload", "extra_forbidden", "body", "payload"));
        }
        if (draft.grantedSecrets() != null && !draft.grantedSecrets().isEmpty()) {
            problems.add(Violation.of(refused + "secrets", "extra_forbidden", "body", "granted_secrets"));
        }
    }

    /**
     * A notification: a severity of {@code INFO}, {@code WARN}, {@code ERROR}; a title or a message, each at most
     * {@code 4,000} characters, with the event's variables only (a notification carries no secrets).
     */
    static void checkNotification(Notification notification, TriggerEvent event) {
        List<Violation> problems = new ArrayList<>();
        if (notification.severity() != null && !Notification.SEVERITIES.contains(notification.severity())) {
            problems.add(Violation.of("One of INFO, WARN, ERROR", "enum", "body", "notification", "severity"));
        }
        if ((notification.title() == null || notification.title().isEmpty())
                && (notification.message() == null || notification.message().isEmpty())) {
            problems.add(Violation.of("A notification needs a title or a message", "missing", "body", "notification",
                    "message"));
        }
        for (String[] field : new String[][] { { "title", notification.title() },
                { "message", notification.message() } }) {
            if (field[1] == null) {
                continue;
            }
            if (field[1].length() > 4000) {
                problems.add(
                        Violation.of("At most 4000 characters", "string_too_long", "body", "notification", field[0]));
                continue;
            }
            List<String> refused = new ArrayList<>();
            for (String variable : new TreeSet<>(PayloadTemplate.variablesOf(field[1]))) {
                if (!AutomationVariables.known(event, variable)
                        || AutomationVariables.SECRET_NAME.matcher(variable).matches()) {
                    refused.add(variable);
                }
            }
            if (!refused.isEmpty()) {
                problems.add(Violation.of(
                        "Unknown variables for " + event + ": " + String.join(", ", refused)
                                + " (a notification carries no secrets)",
                        "unknown_variable", "body", "notification", field[0]));
            }
        }
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems);
        }
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
        if (emptyToNull(draft.tagRegex()) != null) {
            if (!event.isTagEvent()) {
                problems.add(Violation.of(
                        "Only tag events (ADD_ARTIFACT_TAG, REMOVE_ARTIFACT_TAG, ADD_COLLECTION_TAG, "
                                + "REMOVE_COLLECTION_TAG) have a tag regular expression",
                        "extra_forbidden", "body", "tag_regex"));
            } else {
                regex(draft.tagRegex(), problems, "tag_regex");
            }
        }
        if (event.isRunEvent() && emptyToNull(draft.collection()) != null) {
            problems.add(
                    Violation.of("Only artifact events have a collection", "extra_forbidden", "body", "collection"));
        }
        if (!event.isRunEvent() && (emptyToNull(draft.runCreator()) != null || emptyToNull(draft.runNameRegex()) != null
                || emptyToNull(draft.runDisplayNameRegex()) != null)) {
            problems.add(Violation.of("Run filters are for run events only", "extra_forbidden", "body", "run_filter"));
        }
        if (emptyToNull(draft.runNameRegex()) != null) {
            regex(draft.runNameRegex(), problems, "run_filter", "name_regex");
        }
        if (emptyToNull(draft.runDisplayNameRegex()) != null) {
            regex(draft.runDisplayNameRegex(), problems, "run_filter", "display_name_regex");
        }
        if (event == TriggerEvent.RUN_METRIC_THRESHOLD) {
            Threshold threshold = draft.threshold();
            if (threshold == null) {
                problems.add(Violation.of("RUN_METRIC_THRESHOLD automations need metric_threshold", "missing", "body",
                        "metric_threshold"));
            } else {
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
                if (!Double.isFinite(change.amount()) || change.amount() < 0) {
                    problems.add(Violation.of("Must be a finite number, at least 0", "finite_number", "body",
                            "metric_change", "amount"));
                }
            }
        } else if (draft.change() != null) {
            problems.add(Violation.of("Only RUN_METRIC_CHANGE automations have metric_change", "extra_forbidden",
                    "body", "metric_change"));
        }
        if (event == TriggerEvent.RUN_METRIC_ZSCORE) {
            ZScore zscore = draft.zscore();
            if (zscore == null) {
                problems.add(Violation.of("RUN_METRIC_ZSCORE automations need metric_zscore", "missing", "body",
                        "metric_zscore"));
            } else if (!Double.isFinite(zscore.threshold()) || zscore.threshold() <= 0) {
                problems.add(Violation.of("Must be a finite number above 0", "finite_number", "body", "metric_zscore",
                        "threshold"));
            }
        } else if (draft.zscore() != null) {
            problems.add(Violation.of("Only RUN_METRIC_ZSCORE automations have metric_zscore", "extra_forbidden",
                    "body", "metric_zscore"));
        }
        if (event == TriggerEvent.WEAVE_METRIC_THRESHOLD) {
            checkWeaveMetric(draft.weaveMetric(), problems);
            if (emptyToNull(draft.collection()) != null) {
                problems.add(Violation.of("Only artifact events have a collection", "extra_forbidden", "body",
                        "collection"));
            }
        } else if (draft.weaveMetric() != null) {
            problems.add(Violation.of("Only WEAVE_METRIC_THRESHOLD automations have weave_metric", "extra_forbidden",
                    "body", "weave_metric"));
        }
        if (event != TriggerEvent.RUN_STATE && draft.runStates() != null && !draft.runStates().isEmpty()) {
            problems.add(Violation.of("Only RUN_STATE automations have run_states", "extra_forbidden", "body",
                    "run_states"));
        }
    }

    /**
     * A Weave metric condition: an op, a metric path Weave's calls can have ({@code output[.key...]} or
     * {@code feedback.[type].payload[.key...]}), one window (a number of values or of seconds), a finite threshold.
     */
    private static void checkWeaveMetric(WeaveMetric metric, List<Violation> problems) {
        if (metric == null) {
            problems.add(Violation.of("WEAVE_METRIC_THRESHOLD automations need weave_metric", "missing", "body",
                    "weave_metric"));
            return;
        }
        if (metric.op() == null || metric.op().isBlank()) {
            problems.add(Violation.of("Field required: the name of the op whose calls carry the scores", "missing",
                    "body", "weave_metric", "op_name"));
        }
        if (metric.path() == null) {
            problems.add(Violation.of(
                    "Must be output[.key...] (the calls' output) or feedback.[<feedback type>].payload[.key...] "
                            + "(feedback on the calls), keys without '.', '[' or ']'",
                    "value_error", "body", "weave_metric", "metric"));
        }
        if ((metric.lastValues() == null) == (metric.seconds() == null)) {
            problems.add(Violation.of("Give one window: window (a number of values) or window_seconds", "value_error",
                    "body", "weave_metric", "window"));
        } else if (metric.lastValues() != null && (metric.lastValues() < 1 || metric.lastValues() > 1000)) {
            problems.add(Violation.of("Must be from 1 to 1000", "value_error", "body", "weave_metric", "window"));
        } else if (metric.seconds() != null && (metric.seconds() < 1 || metric.seconds() > 2_592_000)) {
            problems.add(Violation.of("Must be from 1 to 2592000 (30 days)", "value_error", "body", "weave_metric",
                    "window_seconds"));
        }
        if (!Double.isFinite(metric.threshold())) {
            problems.add(Violation.of("Must be a finite number", "finite_number", "body", "weave_metric", "threshold"));
        }
    }

    private static void regex(String regex, List<Violation> problems, Object... field) {
        String problem = RegularExpressions.problem(regex);
        if (problem != null) {
            Object[] loc = new Object[field.length + 1];
            loc[0] = "body";
            System.arraycopy(field, 0, loc, 1, field.length);
            problems.add(Violation.of(problem, "regex", loc));
        }
    }

    private static String emptyToNull(String value) {
        return value == null || value.isEmpty() ? null : value;
    }

    private static <T> T or(T given, T stored) {
        return given != null ? given : stored;
    }
}
