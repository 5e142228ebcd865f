package dev.fulcrum.wandb;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.automations.AutomationCondition;
import dev.fulcrum.automations.AutomationCondition.Aggregation;
import dev.fulcrum.automations.AutomationCondition.Change;
import dev.fulcrum.automations.AutomationCondition.Threshold;
import dev.fulcrum.automations.AutomationCondition.ZScore;
import dev.fulcrum.automations.TriggerEvent;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.StorableText;

/**
 * The event filters of the SDK's automations (MongoDB-like JSON, {@code wandb/automations/events.py}) as Fulcrum's
 * automation conditions, and back. Artifact events: {@code {"$or": [{"$and": [...]}]}} holding at most the alias or the
 * tag ({@code $eq} or {@code $regex}, alias events only). Run events: {@code run_filter} ({@code {"$and": [...]}} with
 * the run's {@code name} ({@code $eq}, {@code $regex}), {@code display_name} ({@code $eq}, {@code $contains},
 * {@code $regex}: the SDK's {@code RunEvent.name}) and {@code username} ({@code $eq}), as JSON text or an object) and
 * {@code run_metric_filter} ({@code threshold_filter}, {@code change_filter} or {@code zscore_filter}) or
 * {@code run_state_filter}. Anything else is a 422 naming it: a filter Fulcrum cannot keep is never dropped in silence.
 */
final class WandbEventFilters {

    /** The SDK's event types and Fulcrum's. */
    static final Map<String, TriggerEvent> EVENTS = Map.ofEntries(
            Map.entry("ADD_ARTIFACT_ALIAS", TriggerEvent.ADD_ARTIFACT_ALIAS),
            Map.entry("ADD_ARTIFACT_TAG", TriggerEvent.ADD_ARTIFACT_TAG),
            Map.entry("REMOVE_ARTIFACT_TAG", TriggerEvent.REMOVE_ARTIFACT_TAG),
            Map.entry("ADD_COLLECTION_TAG", TriggerEvent.ADD_COLLECTION_TAG),
            Map.entry("REMOVE_COLLECTION_TAG", TriggerEvent.REMOVE_COLLECTION_TAG),
            Map.entry("LINK_MODEL", TriggerEvent.LINK_ARTIFACT),
            Map.entry("UNLINK_ARTIFACT", TriggerEvent.UNLINK_ARTIFACT),
            Map.entry("CREATE_ARTIFACT", TriggerEvent.CREATE_ARTIFACT),
            Map.entry("RUN_METRIC", TriggerEvent.RUN_METRIC_THRESHOLD),
            Map.entry("RUN_METRIC_CHANGE", TriggerEvent.RUN_METRIC_CHANGE),
            Map.entry("RUN_METRIC_ZSCORE", TriggerEvent.RUN_METRIC_ZSCORE),
            Map.entry("RUN_STATE", TriggerEvent.RUN_STATE));

    private static final String FIELD = "eventFilter";
    private static final String META = "\\.^$|?*+()[]{}";

    private WandbEventFilters() {
    }

    /** What a filter sets of an automation's condition (the run filter parts null when not given). */
    record Conditions(String aliasRegex, String runCreator, String runNameRegex, Threshold threshold, Change change,
            ZScore zscore, List<String> runStates, String tagRegex, String runDisplayNameRegex) {
    }

    static TriggerEvent event(String sdkType) {
        TriggerEvent event = EVENTS.get(sdkType);
        if (event == null) {
            throw ApiException.invalid(Violation.of(
                    "Fulcrum has no " + sdkType + " automations; its events are "
                            + String.join(", ", new java.util.TreeSet<>(EVENTS.keySet())),
                    "enum", "body", "input", "triggeringEventType"));
        }
        return event;
    }

    static String sdkType(TriggerEvent event) {
        // WEAVE_METRIC_THRESHOLD: the SDK knows the type (its enums) but has no event class to make one with
        return EVENTS.entrySet().stream().filter(e -> e.getValue() == event).findFirst().map(Map.Entry::getKey)
                .orElse(event.name());
    }

    // ---------------------------------------------------------------- from the SDK

    static Conditions parse(TriggerEvent event, String text) {
        JsonNode filter = json(text);
        if (!event.isRunEvent()) {
            // a saved automation's form wraps the filter once more: {"filter": "<the filter>"}
            if (filter.size() == 1 && filter.has("filter")) {
                filter = filter.get("filter").isTextual() ? json(filter.get("filter").asText()) : filter.get("filter");
            }
            // the alias of alias events, the tag of tag events
            String wanted = event == TriggerEvent.ADD_ARTIFACT_ALIAS ? "alias" : event.isTagEvent() ? "tag" : null;
            String regex = null;
            for (JsonNode term : terms(filter, true)) {
                String field = term.fieldNames().next();
                if (!field.equals(wanted)) {
                    throw refused(event + " automations filter on nothing but the alias of ADD_ARTIFACT_ALIAS and the "
                            + "tag of tag events: " + field);
                }
                if (regex != null) {
                    throw refused("One " + wanted + " condition only");
                }
                regex = regex(term.get(field), wanted);
            }
            return event.isTagEvent() ? new Conditions(null, null, null, null, null, null, null, regex, null)
                    : new Conditions(regex, null, null, null, null, null, null, null, null);
        }
        if (!filter.isObject()) {
            throw refused("Run events' filters are objects");
        }
        List<String> known = List.of("run_filter", "run_metric_filter", "run_state_filter", "metric_filter");
        filter.fieldNames().forEachRemaining(name -> {
            if (!known.contains(name)) {
                throw refused("Unknown part of a run event's filter: " + name);
            }
        });
        if (filter.hasNonNull("metric_filter")) {
            throw refused("metric_filter (the SDK's deprecated form) is not offered: use run_metric_filter");
        }
        String creator = "";
        String name = "";
        String displayName = "";
        JsonNode runFilter = filter.get("run_filter");
        if (runFilter != null && !runFilter.isNull()) {
            for (JsonNode term : terms(runFilter.isTextual() ? json(runFilter.asText()) : runFilter, false)) {
                String field = term.fieldNames().next();
                switch (field) {
                    case "name" -> name = regex(term.get(field), "run name");
                    case "username" -> creator = equal(term.get(field), "username");
                    case "display_name" -> displayName = displayNameRegex(term.get(field));
                    default -> throw refused("Fulcrum's run filters are the run's name ($eq, $regex), display_name "
                            + "($eq, $contains, $regex) and username ($eq), not " + field);
                }
            }
        }
        Threshold threshold = null;
        Change change = null;
        ZScore zscore = null;
        List<String> states = null;
        if (event == TriggerEvent.RUN_STATE) {
            states = states(filter.path("run_state_filter"));
        } else {
            JsonNode metric = filter.path("run_metric_filter");
            if (event == TriggerEvent.RUN_METRIC_THRESHOLD && metric.path("threshold_filter").isObject()) {
                threshold = threshold(metric.get("threshold_filter"));
            } else if (event == TriggerEvent.RUN_METRIC_CHANGE && metric.path("change_filter").isObject()) {
                change = change(metric.get("change_filter"));
            } else if (event == TriggerEvent.RUN_METRIC_ZSCORE && metric.path("zscore_filter").isObject()) {
                zscore = zscore(metric.get("zscore_filter"));
            } else {
                throw refused(event + " automations need run_metric_filter." + switch (event) {
                    case RUN_METRIC_THRESHOLD -> "threshold_filter";
                    case RUN_METRIC_CHANGE -> "change_filter";
                    default -> "zscore_filter";
                });
            }
        }
        return new Conditions(null, creator, name, threshold, change, zscore, states, null, displayName);
    }

    private static List<JsonNode> terms(JsonNode filter, boolean inOr) {
        JsonNode and = filter;
        if (inOr) {
            JsonNode or = filter.get("$or");
            if (filter.size() != 1 || or == null || !or.isArray() || or.size() > 1) {
                throw refused("Artifact events' filters are {\"$or\": [{\"$and\": [...]}]} (one $and)");
            }
            if (or.isEmpty()) {
                return List.of();
            }
            and = or.get(0);
        }
        JsonNode terms = and.get("$and");
        if (and.size() != 1 || terms == null || !terms.isArray()) {
            throw refused("Fulcrum's conditions are one {\"$and\": [...]}");
        }
        List<JsonNode> found = new ArrayList<>();
        for (JsonNode term : terms) {
            if (term.isObject() && term.size() == 1 && term.has("$and")) {
                found.addAll(terms(term, false));
            } else if (term.isObject() && term.size() == 1 && !term.fieldNames().next().startsWith("$")) {
                found.add(term);
            } else {
                throw refused("Each condition names one field: " + term);
            }
        }
        return found;
    }

    /**
     * The display name's regular expression: {@code {"$contains": value}} (the SDK's {@code RunEvent.name.contains},
     * quoted, unanchored) or as {@link #regex}.
     */
    private static String displayNameRegex(JsonNode condition) {
        if (condition.isObject() && condition.size() == 1 && condition.has("$contains")) {
            JsonNode value = condition.get("$contains");
            if (!value.isTextual() || value.asText().isEmpty()) {
                throw refused("The run display name's $contains takes a non-empty string: " + condition);
            }
            return quote(value.asText());
        }
        if (condition.isObject() && condition.size() == 1 && !condition.has("$eq") && !condition.has("$regex")) {
            throw refused("The run display name is compared with $eq, $contains or $regex, not "
                    + condition.fieldNames().next());
        }
        return regex(condition, "run display name");
    }

    /** A regular expression from {@code {"$eq": value}} (quoted), {@code {"$regex": value}} or a bare value. */
    private static String regex(JsonNode condition, String what) {
        if (condition.isObject() && condition.size() == 1 && condition.get("$regex") != null
                && condition.get("$regex").isTextual()) {
            return condition.get("$regex").asText();
        }
        return "^" + quote(equal(condition, what)) + "$";
    }

    private static String equal(JsonNode condition, String what) {
        JsonNode value = condition.isObject() && condition.size() == 1 ? condition.get("$eq") : condition;
        if (value == null || !value.isTextual()) {
            throw refused("The " + what + " is compared with $eq" + ("username".equals(what) ? "" : " or $regex")
                    + " and a string: " + condition);
        }
        return value.asText();
    }

    private static List<String> states(JsonNode filter) {
        JsonNode given = filter.path("states");
        if (!given.isArray() || given.isEmpty()) {
            throw refused("RUN_STATE automations need run_state_filter.states");
        }
        List<String> states = new ArrayList<>();
        for (JsonNode state : given) {
            String value = state.asText().toLowerCase(Locale.ROOT);
            if ("crashed".equals(value)) {
                value = "failed"; // the SDK's alias of FAILED
            }
            if (!"finished".equals(value) && !"failed".equals(value)) {
                throw refused("Fulcrum's run state events are FINISHED and FAILED, not " + state.asText());
            }
            if (!states.contains(value)) {
                states.add(value);
            }
        }
        return states.stream().sorted().toList();
    }

    private static Threshold threshold(JsonNode t) {
        String cmp = text(t, "cmp_op");
        String comparison = switch (cmp == null ? "" : cmp) {
            case "$gt" -> ">";
            case "$gte" -> ">=";
            case "$lt" -> "<";
            case "$lte" -> "<=";
            default -> throw refused("threshold_filter.cmp_op is $gt, $gte, $lt or $lte, not " + cmp);
        };
        return new Threshold(metric(t), aggregation(t), window(t, "window_size"), comparison, number(t, "threshold"));
    }

    private static Change change(JsonNode c) {
        int window = window(c, "current_window_size");
        if (c.hasNonNull("prior_window_size") && window(c, "prior_window_size") != window) {
            throw refused("Fulcrum compares windows of one size: prior_window_size must be current_window_size");
        }
        String type = String.valueOf(text(c, "change_type")).toUpperCase(Locale.ROOT);
        if (!type.equals("ABSOLUTE") && !type.equals("RELATIVE")) {
            throw refused("change_filter.change_type is ABSOLUTE or RELATIVE");
        }
        String direction = String.valueOf(text(c, "change_dir")).toUpperCase(Locale.ROOT);
        if (!List.of("INCREASE", "DECREASE", "ANY").contains(direction)) {
            throw refused("change_filter.change_dir is INCREASE, DECREASE or ANY");
        }
        double amount = number(c, "change_amount");
        if (amount < 0) {
            throw refused("change_filter.change_amount must be at least 0");
        }
        return new Change(metric(c), aggregation(c), window, type.equals("RELATIVE"), direction, amount);
    }

    private static ZScore zscore(JsonNode z) {
        int window = 30;
        if (z.hasNonNull("window_size")) {
            JsonNode given = z.get("window_size");
            if (!given.isIntegralNumber() || !given.canConvertToInt() || given.asInt() < 2 || given.asInt() > 1000) {
                throw refused("zscore_filter.window_size must be an integer, 2 to 1000");
            }
            window = given.asInt();
        }
        double threshold = z.hasNonNull("threshold") ? number(z, "threshold") : 3;
        if (threshold <= 0) {
            throw refused("zscore_filter.threshold must be above 0");
        }
        String direction = z.hasNonNull("change_dir") ? z.get("change_dir").asText().toUpperCase(Locale.ROOT) : "ANY";
        if (!List.of("INCREASE", "DECREASE", "ANY").contains(direction)) {
            throw refused("zscore_filter.change_dir is INCREASE, DECREASE or ANY");
        }
        return new ZScore(metric(z), window, threshold, direction);
    }

    private static String metric(JsonNode filter) {
        String name = text(filter, "name");
        if (name == null || name.isEmpty()) {
            throw refused("The metric's name is required");
        }
        return name;
    }

    /** {@code agg_op}; none (a single value) is the average of a window of one. */
    private static Aggregation aggregation(JsonNode filter) {
        String agg = text(filter, "agg_op");
        if (agg == null) {
            return Aggregation.AVERAGE;
        }
        try {
            return Aggregation.valueOf(agg.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw refused("agg_op is MAX, MIN or AVERAGE, not " + agg);
        }
    }

    private static int window(JsonNode filter, String field) {
        if (text(filter, "agg_op") == null) {
            return 1;
        }
        JsonNode window = filter.get(field);
        if (window == null || window.isNull()) {
            return 1;
        }
        if (!window.canConvertToInt() || !window.isIntegralNumber() || window.asInt() < 1 || window.asInt() > 1000) {
            throw refused(field + " must be an integer, 1 to 1000");
        }
        return window.asInt();
    }

    private static double number(JsonNode filter, String field) {
        JsonNode value = filter.get(field);
        if (value == null || !value.isNumber() || !Double.isFinite(value.asDouble())) {
            throw refused(field + " must be a finite number");
        }
        return value.asDouble();
    }

    private static String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }

    private static JsonNode json(String text) {
        try {
            // strings the database cannot store (NUL, unpaired surrogates) are refused here, at the filter
            JsonNode node = StorableText.json(SdkJson.MAPPER, text, "body", "input", FIELD);
            if (node == null || !node.isObject()) {
                throw refused("Must be a JSON object");
            }
            return node;
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw refused("Must be JSON: " + e.getOriginalMessage());
        }
    }

    private static ApiException refused(String message) {
        return ApiException.invalid(Violation.of(message, "value_error", "body", "input", FIELD));
    }

    static String quote(String literal) {
        StringBuilder quoted = new StringBuilder();
        for (char c : literal.toCharArray()) {
            if (META.indexOf(c) >= 0) {
                quoted.append('\\');
            }
            quoted.append(c);
        }
        return quoted.toString();
    }

    /** The literal a regex of {@link #regex} made from {@code $eq} matches exactly, or null when it is another. */
    static String literal(String regex) {
        if (regex.length() < 2 || regex.charAt(0) != '^' || regex.charAt(regex.length() - 1) != '$') {
            return null;
        }
        StringBuilder literal = new StringBuilder();
        String body = regex.substring(1, regex.length() - 1);
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (c == '\\') {
                if (i + 1 == body.length() || META.indexOf(body.charAt(i + 1)) < 0) {
                    return null;
                }
                literal.append(body.charAt(++i));
            } else if (META.indexOf(c) >= 0) {
                return null;
            } else {
                literal.append(c);
            }
        }
        return literal.toString();
    }

    // ---------------------------------------------------------------- to the SDK

    /** The saved automation's filter, as the SDK reads it ({@code FilterEventTriggeringCondition.filter}). */
    static String saved(TriggerEvent event, AutomationCondition condition) {
        JsonNodeFactory json = JsonNodeFactory.instance;
        if (!event.isRunEvent()) {
            ArrayNode and = json.arrayNode();
            if (condition.aliasRegex() != null) {
                and.add(match("alias", condition.aliasRegex()));
            }
            if (condition.tagRegex() != null) {
                and.add(match("tag", condition.tagRegex()));
            }
            ObjectNode filter = json.objectNode();
            filter.putArray("$or").addObject().set("$and", and);
            return SdkJson.write(json.objectNode().put("filter", SdkJson.write(filter)));
        }
        ArrayNode and = json.arrayNode();
        if (condition.runNameRegex() != null) {
            and.add(match("name", condition.runNameRegex()));
        }
        if (condition.runCreator() != null) {
            and.addObject().putObject("username").put("$eq", condition.runCreator());
        }
        if (condition.runDisplayNameRegex() != null) {
            String regex = condition.runDisplayNameRegex();
            String contained = literal("^" + regex + "$");
            and.add(contained != null && !contained.isEmpty() && literal(regex) == null
                    ? JsonNodeFactory.instance.objectNode().set("display_name",
                            JsonNodeFactory.instance.objectNode().put("$contains", contained))
                    : match("display_name", regex));
        }
        ObjectNode saved = json.objectNode();
        saved.put("run_filter", SdkJson.write(json.objectNode().set("$and", and)));
        if (event == TriggerEvent.RUN_STATE) {
            ArrayNode states = saved.putObject("run_state_filter").putArray("states");
            (condition.runStates().isEmpty() ? List.of("failed", "finished") : condition.runStates())
                    .forEach(state -> states.add(state.toUpperCase(Locale.ROOT)));
        } else if (condition.threshold() != null) {
            Threshold t = condition.threshold();
            ObjectNode f = saved.putObject("run_metric_filter").putObject("threshold_filter").put("name", t.metric());
            aggregation(f, t.aggregation(), t.window(), "window_size");
            f.put("cmp_op", switch (t.comparison()) {
                case ">" -> "$gt";
                case ">=" -> "$gte";
                case "<" -> "$lt";
                default -> "$lte";
            }).put("threshold", t.threshold());
        } else if (condition.change() != null) {
            Change c = condition.change();
            ObjectNode f = saved.putObject("run_metric_filter").putObject("change_filter").put("name", c.metric());
            aggregation(f, c.aggregation(), c.window(), "current_window_size");
            f.put("prior_window_size", c.window()).put("change_type", c.relative() ? "RELATIVE" : "ABSOLUTE")
                    .put("change_dir", c.direction()).put("change_amount", c.amount());
        } else if (condition.zscore() != null) {
            ZScore z = condition.zscore();
            saved.putObject("run_metric_filter").putObject("zscore_filter").put("name", z.metric())
                    .put("window_size", z.window()).put("threshold", z.threshold()).put("change_dir", z.direction());
        }
        return SdkJson.write(saved);
    }

    private static void aggregation(ObjectNode filter, Aggregation aggregation, int window, String field) {
        if (window == 1) {
            filter.putNull("agg_op"); // any aggregate of one value is the value
        } else {
            filter.put("agg_op", aggregation.name());
        }
        filter.put(field, window);
    }

    private static ObjectNode match(String field, String regex) {
        String literal = literal(regex);
        ObjectNode term = JsonNodeFactory.instance.objectNode();
        term.putObject(field).put(literal != null ? "$eq" : "$regex", literal != null ? literal : regex);
        return term;
    }
}
