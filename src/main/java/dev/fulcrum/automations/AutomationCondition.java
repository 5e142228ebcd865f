package dev.fulcrum.automations;

import java.util.List;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.re2j.Pattern;

import dev.fulcrum.platform.json.RegularExpressions;
import dev.fulcrum.traces.CallScores;

/**
 * What an automation's event must also satisfy: the collection (artifact events), the alias regex (alias events), the
 * tag regex (tag events), the run filters (run events: creator, name regex, display-name regex), the metric condition
 * (metric events: a threshold, a change or a z-score) and the run states (state events). Stored as one jsonb value.
 * Regexes follow the platform's one rule for a user's regex ({@link RegularExpressions}), which also keeps them
 * compiled, so an event does not compile its automations' regexes again.
 */
public record AutomationCondition(String aliasRegex, String runCreator, String runNameRegex, Threshold threshold,
        Change change, ZScore zscore, List<String> runStates, String collection, String tagRegex, Pattern alias,
        Pattern runName, Pattern tag, String runDisplayNameRegex, Pattern runDisplayName, WeaveMetric weaveMetric) {

    private static final Logger LOG = Logger.getLogger(AutomationCondition.class);

    /** Matches no string: no character is outside every character. */
    private static final Pattern NOTHING = Pattern.compile("[^\\x00-\\x{10FFFF}]");

    public enum Aggregation {
        MAX, MIN, AVERAGE
    }

    /** Aggregate of the last {@code window} values compared with the threshold. */
    public record Threshold(String metric, Aggregation aggregation, int window, String comparison, double threshold) {

        boolean holds(double value) {
            return switch (comparison) {
                case ">" -> value > threshold;
                case ">=" -> value >= threshold;
                case "<" -> value < threshold;
                case "<=" -> value <= threshold;
                default -> throw new IllegalStateException("comparison " + comparison);
            };
        }
    }

    /** Aggregate of the last {@code window} values against that of the {@code window} values before them. */
    public record Change(String metric, Aggregation aggregation, int window, boolean relative, String direction,
            double amount) {

        /** Whether moving from {@code prior} to {@code current} is a change this condition fires on. */
        boolean holds(double prior, double current) {
            double delta = current - prior;
            if (relative) {
                if (prior == 0) {
                    return false;
                }
                delta = delta / Math.abs(prior);
            }
            return switch (direction) {
                case "INCREASE" -> delta > 0 && delta >= amount;
                case "DECREASE" -> delta < 0 && -delta >= amount;
                default -> delta != 0 && Math.abs(delta) >= amount;
            };
        }
    }

    /**
     * The z-score of the latest value against the {@code window} values before it (their mean and population standard
     * deviation): {@code INCREASE} fires at {@code z >= threshold}, {@code DECREASE} at {@code z <= -threshold},
     * {@code ANY} at {@code |z| >= threshold}.
     */
    public record ZScore(String metric, int window, double threshold, String direction) {

        boolean holds(double z) {
            return switch (direction) {
                case "INCREASE" -> z >= threshold;
                case "DECREASE" -> z <= -threshold;
                default -> Math.abs(z) >= threshold;
            };
        }
    }

    /**
     * {@code WEAVE_METRIC_THRESHOLD}: the {@code aggregation} of the scores at {@code metric} (a path into the output
     * of the op's calls or into the payload of a type of feedback on them, {@code dev.fulcrum.traces.CallScores.Path})
     * recorded on calls of the op {@code op} over the last {@code lastValues} values or the last {@code seconds}
     * seconds (one of them), compared with the threshold.
     */
    public record WeaveMetric(String op, String metric, CallScores.Path path, Aggregation aggregation,
            Integer lastValues, Integer seconds, String comparison, double threshold) {

        /** With {@code metric} parsed once, here: its path, null when it is not one (a refused condition). */
        public WeaveMetric(String op, String metric, Aggregation aggregation, Integer lastValues, Integer seconds,
                String comparison, double threshold) {
            this(op, metric, CallScores.Path.parse(metric).orElse(null), aggregation, lastValues, seconds, comparison,
                    threshold);
        }

        boolean holds(double value) {
            return new Threshold(metric, aggregation, 1, comparison, threshold).holds(value);
        }

        /** The window as the payload variable {@code metric_window} shows it: {@code 5 values}, {@code 300 seconds}. */
        String window() {
            return seconds != null ? seconds + " seconds" : lastValues + " values";
        }
    }

    public static AutomationCondition of(String aliasRegex, String runCreator, String runNameRegex, Threshold threshold,
            Change change, List<String> runStates) {
        return of(aliasRegex, runCreator, runNameRegex, threshold, change, null, runStates);
    }

    public static AutomationCondition of(String aliasRegex, String runCreator, String runNameRegex, Threshold threshold,
            Change change, ZScore zscore, List<String> runStates) {
        return of(aliasRegex, runCreator, runNameRegex, threshold, change, zscore, runStates, null);
    }

    /** With {@code collection}: an artifact event counts only when its version is in the collection of that name. */
    public static AutomationCondition of(String aliasRegex, String runCreator, String runNameRegex, Threshold threshold,
            Change change, ZScore zscore, List<String> runStates, String collection) {
        return new AutomationCondition(aliasRegex, runCreator, runNameRegex, threshold, change, zscore,
                runStates == null ? List.of() : List.copyOf(runStates), collection, null, usable(aliasRegex),
                usable(runNameRegex), null, null, null, null);
    }

    /** This condition with a tag regex: a tag event counts only when it matches somewhere in the tag. */
    public AutomationCondition withTagRegex(String regex) {
        return new AutomationCondition(aliasRegex, runCreator, runNameRegex, threshold, change, zscore, runStates,
                collection, regex, alias, runName, usable(regex), runDisplayNameRegex, runDisplayName, weaveMetric);
    }

    /** This condition with a display-name regex: a run event counts only when it matches in the run's display name. */
    public AutomationCondition withRunDisplayNameRegex(String regex) {
        return new AutomationCondition(aliasRegex, runCreator, runNameRegex, threshold, change, zscore, runStates,
                collection, tagRegex, alias, runName, tag, regex, usable(regex), weaveMetric);
    }

    /** This condition with a Weave metric condition ({@code WEAVE_METRIC_THRESHOLD}). */
    public AutomationCondition withWeaveMetric(WeaveMetric metric) {
        return new AutomationCondition(aliasRegex, runCreator, runNameRegex, threshold, change, zscore, runStates,
                collection, tagRegex, alias, runName, tag, runDisplayNameRegex, runDisplayName, metric);
    }

    public boolean tagMatches(String value) {
        return tag == null || (value != null && tag.matcher(value).find());
    }

    /** Whether an artifact event of the collection {@code name} counts (every one when no collection is given). */
    public boolean collectionMatches(String name) {
        return collection == null || collection.equals(name);
    }

    /**
     * The compiled regex; one saved before the limits that breaks them (too long or too large) matches nothing instead,
     * so that it neither fires on everything nor costs every event.
     */
    private static Pattern usable(String regex) {
        if (regex == null) {
            return null;
        }
        String problem = RegularExpressions.problem(regex);
        if (problem != null) {
            LOG.warnf("An automation's regular expression is not used (it matches nothing): %s", problem);
            return NOTHING;
        }
        return RegularExpressions.pattern(regex);
    }

    public boolean aliasMatches(String value) {
        return alias == null || (value != null && alias.matcher(value).find());
    }

    /** The run filters: creator and name regex, each when given. */
    public boolean runMatches(String creator, String name) {
        return runMatches(creator, name, null);
    }

    /** The run filters: creator, name regex and display-name regex, each when given. */
    public boolean runMatches(String creator, String name, String displayName) {
        if (runCreator != null && !runCreator.equals(creator)) {
            return false;
        }
        if (runDisplayName != null && (displayName == null || !runDisplayName.matcher(displayName).find())) {
            return false;
        }
        return runName == null || (name != null && runName.matcher(name).find());
    }

    public boolean stateMatches(String state) {
        return runStates.isEmpty() ? "finished".equals(state) || "failed".equals(state) : runStates.contains(state);
    }

    ObjectNode toJson() {
        ObjectNode json = JsonNodeFactory.instance.objectNode();
        if (aliasRegex != null) {
            json.put("alias_regex", aliasRegex);
        }
        if (runCreator != null) {
            json.put("run_creator", runCreator);
        }
        if (runNameRegex != null) {
            json.put("run_name_regex", runNameRegex);
        }
        if (runDisplayNameRegex != null) {
            json.put("run_display_name_regex", runDisplayNameRegex);
        }
        if (threshold != null) {
            json.putObject("metric_threshold").put("metric", threshold.metric())
                    .put("aggregation", threshold.aggregation().name()).put("window", threshold.window())
                    .put("comparison", threshold.comparison()).put("threshold", threshold.threshold());
        }
        if (change != null) {
            json.putObject("metric_change").put("metric", change.metric())
                    .put("aggregation", change.aggregation().name()).put("window", change.window())
                    .put("relative", change.relative()).put("direction", change.direction())
                    .put("amount", change.amount());
        }
        if (zscore != null) {
            json.putObject("metric_zscore").put("metric", zscore.metric()).put("window", zscore.window())
                    .put("threshold", zscore.threshold()).put("direction", zscore.direction());
        }
        if (weaveMetric != null) {
            ObjectNode w = json.putObject("weave_metric").put("op_name", weaveMetric.op())
                    .put("metric", weaveMetric.metric()).put("aggregation", weaveMetric.aggregation().name())
                    .put("comparison", weaveMetric.comparison()).put("threshold", weaveMetric.threshold());
            if (weaveMetric.lastValues() != null) {
                w.put("window", weaveMetric.lastValues());
            }
            if (weaveMetric.seconds() != null) {
                w.put("window_seconds", weaveMetric.seconds());
            }
        }
        if (collection != null) {
            json.put("collection", collection);
        }
        if (tagRegex != null) {
            json.put("tag_regex", tagRegex);
        }
        if (!runStates.isEmpty()) {
            ArrayNode states = json.putArray("run_states");
            runStates.forEach(states::add);
        }
        return json;
    }

    static AutomationCondition fromJson(JsonNode json) {
        Threshold threshold = null;
        JsonNode t = json.get("metric_threshold");
        if (t != null) {
            threshold = new Threshold(t.get("metric").asText(), Aggregation.valueOf(t.get("aggregation").asText()),
                    t.get("window").asInt(), t.get("comparison").asText(), t.get("threshold").asDouble());
        }
        Change change = null;
        JsonNode c = json.get("metric_change");
        if (c != null) {
            change = new Change(c.get("metric").asText(), Aggregation.valueOf(c.get("aggregation").asText()),
                    c.get("window").asInt(), c.get("relative").asBoolean(), c.get("direction").asText(),
                    c.get("amount").asDouble());
        }
        ZScore zscore = null;
        JsonNode z = json.get("metric_zscore");
        if (z != null) {
            zscore = new ZScore(z.get("metric").asText(), z.get("window").asInt(), z.get("threshold").asDouble(),
                    z.get("direction").asText());
        }
        WeaveMetric weave = null;
        JsonNode w = json.get("weave_metric");
        if (w != null) {
            weave = new WeaveMetric(w.get("op_name").asText(), w.get("metric").asText(),
                    Aggregation.valueOf(w.get("aggregation").asText()),
                    w.has("window") ? w.get("window").asInt() : null,
                    w.has("window_seconds") ? w.get("window_seconds").asInt() : null, w.get("comparison").asText(),
                    w.get("threshold").asDouble());
        }
        List<String> states = new java.util.ArrayList<>();
        JsonNode s = json.get("run_states");
        if (s != null) {
            s.forEach(state -> states.add(state.asText()));
        }
        return of(text(json, "alias_regex"), text(json, "run_creator"), text(json, "run_name_regex"), threshold, change,
                zscore, states, text(json, "collection")).withTagRegex(text(json, "tag_regex"))
                        .withRunDisplayNameRegex(text(json, "run_display_name_regex")).withWeaveMetric(weave);
    }

    private static String text(JsonNode json, String field) {
        JsonNode value = json.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }
}
