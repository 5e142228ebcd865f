package dev.fulcrum.console;

import java.util.List;

/**
 * The payload variables of each event as openapi/automations.yaml lists them, offered for insertion in the payload
 * editor, and the contract's three payload shapes as starting points.
 */
final class PayloadVariables {

    private PayloadVariables() {
    }

    /** A variable, as written in a payload, and the events that have it (space-separated). */
    public record Variable(String text, String events) {
    }

    /** A starting payload. */
    public record Starter(String label, String payload) {
    }

    private static final String ALL_EVENTS = String.join(" ", AutomationScreens.PROJECT_EVENTS);
    /** The events about versions (a collection's tag events have no version). */
    private static final String ARTIFACT = "ADD_ARTIFACT_ALIAS ADD_ARTIFACT_TAG REMOVE_ARTIFACT_TAG LINK_ARTIFACT "
            + "UNLINK_ARTIFACT CREATE_ARTIFACT";
    private static final String COLLECTION_TAG = "ADD_COLLECTION_TAG REMOVE_COLLECTION_TAG";
    private static final String RUN = "RUN_METRIC_THRESHOLD RUN_METRIC_CHANGE RUN_METRIC_ZSCORE RUN_STATE";
    private static final String METRIC = "RUN_METRIC_THRESHOLD RUN_METRIC_CHANGE RUN_METRIC_ZSCORE WEAVE_METRIC_THRESHOLD";
    private static final String WEAVE = "WEAVE_METRIC_THRESHOLD";

    static final List<Variable> ALL = List.of(all("project_name"), all("entity_name"), all("event_type"),
            all("event_author"), all("event_id"), all("event_time"), artifact("alias"), collection("tag"),
            collection("artifact_collection_name"), artifact("artifact_version"), artifact("artifact_version_string"),
            collection("artifact_type"), artifact("version"), collection("registry_name"),
            artifact("artifact_metadata.KEY"), run("run_id"), run("run_name"), run("run_display_name"),
            run("run_created_by"), new Variable("${run_state}", "RUN_STATE"),
            new Variable("${run_previous_state}", "RUN_STATE"), new Variable("${metric_name}", METRIC),
            new Variable("${metric_value}", METRIC), new Variable("${metric_prior_value}", "RUN_METRIC_CHANGE"),
            new Variable("${metric_zscore}", "RUN_METRIC_ZSCORE"),
            new Variable("${metric_window}", "RUN_METRIC_ZSCORE " + WEAVE), new Variable("${op_name}", WEAVE),
            new Variable("${metric_count}", WEAVE), all("ACCESS_TOKEN"));

    static final List<Starter> STARTERS = List.of(new Starter("Repository dispatch", """
            {"event_type": "BUILD_AND_DEPLOY",
             "client_payload": {"event_author": "${event_author}", "artifact_version": "${artifact_version}",
              "artifact_version_string": "${artifact_version_string}",
              "artifact_collection_name": "${artifact_collection_name}", "project_name": "${project_name}",
              "entity_name": "${entity_name}"}}"""), new Starter("Message card", """
            {"@type": "MessageCard", "@context": "http://schema.org/extensions",
             "summary": "${event_type} on ${project_name}",
             "sections": [{"activityTitle": "${event_author}: ${event_type}",
              "facts": [{"name": "Project", "value": "${entity_name}/${project_name}"}], "markdown": true}]}"""),
            new Starter("Chat hook",
                    """
                            {"text": "${event_type} in ${entity_name}/${project_name} by ${event_author}",
                             "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "*${event_type}* in ${project_name}"}},
                              {"type": "divider"}]}"""));

    private static Variable all(String name) {
        return new Variable("${" + name + "}", ALL_EVENTS);
    }

    private static Variable artifact(String name) {
        return new Variable("${" + name + "}", ARTIFACT);
    }

    /** A variable of the version events and of a collection's tag events. */
    private static Variable collection(String name) {
        return new Variable("${" + name + "}", ARTIFACT + " " + COLLECTION_TAG);
    }

    private static Variable run(String name) {
        return new Variable("${" + name + "}", RUN);
    }
}
