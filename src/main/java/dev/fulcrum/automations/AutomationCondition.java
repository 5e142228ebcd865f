package dev.fulcrum.automations;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;

/**
 * What an automation's event must also satisfy: the alias regex (alias events), the run filters (run events), the
 * metric condition (metric events) and the run states (state events). Stored as one jsonb value. Regexes are RE2
 * (RE2/J: linear-time matching), at most {@value #MAX_REGEX_LENGTH} characters compiling to at most
 * {@value #MAX_PROGRAM_SIZE} instructions; compiled patterns are kept (up to {@value #CACHED_PATTERNS}, least recently
 * used dropped first), so an event does not compile its automations' regexes again.
 */
public record AutomationCondition(String aliasRegex, String runCreator, String runNameRegex, Threshold threshold,
        Change change, List<String> runStates, Pattern alias, Pattern runName) {

    /** The longest {@code alias_regex} and {@code run_filter.name_regex}, in characters. */
    public static final int MAX_REGEX_LENGTH = 1024;

    /** The largest compiled regex, in RE2 program instructions (matching time grows with it). */
    public static final int MAX_PROGRAM_SIZE = 5000;

    static final int CACHED_PATTERNS = 512;

    private static final Logger LOG = Logger.getLogger(AutomationCondition.class);

    /** Matches no string: no character is outside every character. */
    private static final Pattern NOTHING = Pattern.compile("[^\\x00-\\x{10FFFF}]");

    private static final Map<String, Pattern> PATTERNS = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Pattern> eldest) {
            return size() > CACHED_PATTERNS;
        }
    };

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

    public static AutomationCondition of(String aliasRegex, String runCreator, String runNameRegex, Threshold threshold,
            Change change, List<String> runStates) {
        return new AutomationCondition(aliasRegex, runCreator, runNameRegex, threshold, change,
                runStates == null ? List.of() : List.copyOf(runStates), usable(aliasRegex), usable(runNameRegex));
    }

    /**
     * The compiled regex; one saved before the limits that breaks them (too long or too large) matches nothing instead,
     * so that it neither fires on everything nor costs every event.
     */
    private static Pattern usable(String regex) {
        if (regex == null) {
            return null;
        }
        String problem = problem(regex);
        if (problem != null) {
            LOG.warnf("An automation's regular expression is not used (it matches nothing): %s", problem);
            return NOTHING;
        }
        return pattern(regex);
    }

    /**
     * Why the regex cannot be used, or null when it can: not RE2, longer than {@value #MAX_REGEX_LENGTH} characters, or
     * compiling to more than {@value #MAX_PROGRAM_SIZE} instructions. Nested counted repetitions are estimated before
     * compiling ({@code ((a{1000}){1000}){1000}} would take gigabytes to compile).
     */
    public static String problem(String regex) {
        if (regex.length() > MAX_REGEX_LENGTH) {
            return "Must be at most " + MAX_REGEX_LENGTH + " characters";
        }
        String tooLarge = "The regular expression is too large: it may compile to at most " + MAX_PROGRAM_SIZE
                + " RE2 instructions (counted repetitions such as {n} multiply the size of what they repeat)";
        if (RegexSize.estimate(regex) > 4L * MAX_PROGRAM_SIZE) {
            return tooLarge;
        }
        try {
            Pattern compiled = pattern(regex);
            if (compiled.programSize() > MAX_PROGRAM_SIZE) {
                forget(regex);
                return tooLarge;
            }
            return null;
        } catch (PatternSyntaxException e) {
            return "Not a valid RE2 regular expression: " + e.getDescription();
        }
    }

    /** The compiled regex, from the cache when it was compiled before. */
    static Pattern pattern(String regex) {
        synchronized (PATTERNS) {
            Pattern cached = PATTERNS.get(regex);
            if (cached != null) {
                return cached;
            }
        }
        Pattern compiled = Pattern.compile(regex);
        synchronized (PATTERNS) {
            PATTERNS.put(regex, compiled);
        }
        return compiled;
    }

    private static void forget(String regex) {
        synchronized (PATTERNS) {
            PATTERNS.remove(regex);
        }
    }

    /** For tests: whether the regex is compiled and kept. */
    static boolean cached(String regex) {
        synchronized (PATTERNS) {
            return PATTERNS.containsKey(regex);
        }
    }

    public boolean aliasMatches(String value) {
        return alias == null || (value != null && alias.matcher(value).find());
    }

    /** The run filters: creator and name regex, each when given. */
    public boolean runMatches(String creator, String name) {
        if (runCreator != null && !runCreator.equals(creator)) {
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
        List<String> states = new java.util.ArrayList<>();
        JsonNode s = json.get("run_states");
        if (s != null) {
            s.forEach(state -> states.add(state.asText()));
        }
        return of(text(json, "alias_regex"), text(json, "run_creator"), text(json, "run_name_regex"), threshold, change,
                states);
    }

    private static String text(JsonNode json, String field) {
        JsonNode value = json.get(field);
        return value == null || value.isNull() ? null : value.asText();
    }
}
