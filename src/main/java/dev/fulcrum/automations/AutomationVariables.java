package dev.fulcrum.automations;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The payload variables ({@code ${name}}) of each automation event, their values for one event and for the sample event
 * a payload is rendered against when it is saved. Values are plain strings; the template puts them inside JSON strings.
 */
final class AutomationVariables {

    static final String METADATA_PREFIX = "artifact_metadata.";
    static final String ACCESS_TOKEN = "ACCESS_TOKEN";
    /** Secret names: upper case, so they can never be taken for an event variable. */
    static final Pattern SECRET_NAME = Pattern.compile("[A-Z_][A-Z0-9_]*");

    private static final Set<String> COMMON = Set.of("project_name", "entity_name", "event_type", "event_author",
            "event_id", "event_time");
    private static final Set<String> ARTIFACT = Set.of("alias", "tag", "artifact_collection_name", "artifact_version",
            "artifact_version_string", "artifact_type", "version", "registry_name");
    /** A collection's tag events: the collection, no version. */
    private static final Set<String> COLLECTION = Set.of("tag", "artifact_collection_name", "artifact_type",
            "registry_name");
    private static final Set<String> RUN = Set.of("run_id", "run_name", "run_display_name", "run_created_by");
    private static final Set<String> RUN_STATE = Set.of("run_state", "run_previous_state");
    private static final Set<String> METRIC = Set.of("metric_name", "metric_value");
    private static final Set<String> CHANGE = Set.of("metric_prior_value");
    private static final Set<String> ZSCORE = Set.of("metric_zscore", "metric_window");
    /** {@code WEAVE_METRIC_THRESHOLD}: the op, the metric, the aggregate that crossed the threshold and its window. */
    private static final Set<String> WEAVE = Set.of("op_name", "metric_name", "metric_value", "metric_window",
            "metric_count");

    private AutomationVariables() {
    }

    /** Whether {@code name} (not a secret) is a variable of the event. */
    static boolean known(TriggerEvent event, String name) {
        if (COMMON.contains(name)) {
            return true;
        }
        if (event.isCollectionEvent()) {
            return COLLECTION.contains(name);
        }
        if (event.isWeaveEvent()) {
            return WEAVE.contains(name);
        }
        if (event.isArtifactEvent()) {
            return ARTIFACT.contains(name)
                    || (name.startsWith(METADATA_PREFIX) && name.length() > METADATA_PREFIX.length()
                            && !name.substring(METADATA_PREFIX.length()).contains("."));
        }
        return RUN.contains(name) || (event == TriggerEvent.RUN_STATE && RUN_STATE.contains(name))
                || (event != TriggerEvent.RUN_STATE && METRIC.contains(name))
                || (event == TriggerEvent.RUN_METRIC_CHANGE && CHANGE.contains(name))
                || (event == TriggerEvent.RUN_METRIC_ZSCORE && ZSCORE.contains(name));
    }

    /** The variables of one event; {@code reading} is what a metric condition saw (null for other events). */
    static Map<String, String> of(TriggerEvent event, long eventId, ObjectNode payload,
            RunMetricConditions.Reading reading) {
        Map<String, String> values = new HashMap<>();
        for (String name : COMMON) {
            values.put(name, text(payload.get(name)));
        }
        values.put("event_type", event.name());
        values.put("event_id", Long.toString(eventId));
        values.put("event_time", Instant.now().truncatedTo(ChronoUnit.MILLIS).toString());
        if (event.isCollectionEvent()) {
            for (String name : COLLECTION) {
                values.put(name, text(payload.get(name)));
            }
        } else if (event.isWeaveEvent()) {
            for (String name : WEAVE) {
                values.put(name, text(payload.get(name)));
            }
        } else if (event.isArtifactEvent()) {
            for (String name : ARTIFACT) {
                values.put(name, text(payload.get(name)));
            }
            JsonNode metadata = payload.get("artifact_metadata");
            if (metadata != null && metadata.isObject()) {
                metadata.fields().forEachRemaining(f -> values.put(METADATA_PREFIX + f.getKey(), text(f.getValue())));
            }
        } else {
            for (String name : RUN) {
                values.put(name, text(payload.get(name)));
            }
            values.put("run_state", text(payload.get("state")));
            values.put("run_previous_state", text(payload.get("previous_state")));
            if (reading != null) {
                values.put("metric_name", reading.metric());
                values.put("metric_value", number(reading.value()));
                values.put("metric_prior_value", reading.prior() == null ? "" : number(reading.prior()));
                if (reading.zscore() != null) {
                    values.put("metric_zscore", number(reading.zscore()));
                    values.put("metric_window", Integer.toString(reading.window()));
                }
            }
        }
        return values;
    }

    /** A value for a variable; a metadata key the version does not have is empty. */
    static String value(Map<String, String> values, String name) {
        return values.getOrDefault(name, "");
    }

    /** Sample values for every variable of the event, to render a payload against when it is saved. */
    static Map<String, String> sample(TriggerEvent event) {
        Map<String, String> values = new HashMap<>();
        values.put("project_name", "sample-project");
        values.put("entity_name", "sample-team");
        values.put("event_type", event.name());
        values.put("event_author", "sample-user");
        values.put("event_id", "1");
        values.put("event_time", "2025-01-01T00:00:00Z");
        if (event.isCollectionEvent()) {
            values.put("tag", "reviewed");
            values.put("artifact_collection_name", "sample-model");
            values.put("artifact_type", "model");
            values.put("registry_name", "");
        } else if (event.isWeaveEvent()) {
            values.put("op_name", "Evaluation.predict_and_score");
            values.put("metric_name", "output.scores.exact.correct");
            values.put("metric_value", "0.95");
            values.put("metric_window", "20 values");
            values.put("metric_count", "20");
        } else if (event.isArtifactEvent()) {
            values.put("alias", event == TriggerEvent.ADD_ARTIFACT_ALIAS ? "production" : "");
            values.put("tag", event.isTagEvent() ? "reviewed" : "");
            values.put("artifact_collection_name", "sample-model");
            values.put("artifact_version", "wandb-artifact:///sample-team/sample-project/sample-model:v0");
            values.put("artifact_version_string", "sample-team/sample-project/sample-model:v0");
            values.put("artifact_type", "model");
            values.put("version", "v0");
            values.put("registry_name", "");
        } else {
            values.put("run_id", "1");
            values.put("run_name", "sample-run");
            values.put("run_display_name", "sample-run");
            values.put("run_created_by", "sample-user");
            values.put("run_state", "finished");
            values.put("run_previous_state", "running");
            values.put("metric_name", "loss");
            values.put("metric_value", "0.5");
            values.put("metric_prior_value", "0.6");
            values.put("metric_zscore", "3.5");
            values.put("metric_window", "30");
        }
        return values;
    }

    static String number(double value) {
        return value == Math.rint(value) && Math.abs(value) < 1e15 ? Long.toString((long) value)
                : Double.toString(value);
    }

    private static String text(JsonNode value) {
        if (value == null || value.isNull()) {
            return "";
        }
        return value.isValueNode() ? value.asText() : value.toString();
    }
}
