package dev.fulcrum.training;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.enterprise.context.ApplicationScoped;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.StorableText;

/**
 * Reads ART trajectory groups: {@code {"trajectories": [{"messages_and_choices": [...], "reward": r, "metrics": {}}]}}.
 * An item of {@code messages_and_choices} is either a chat message ({@code role}, {@code content}), which is context,
 * or an OpenAI Choice ({@code {"message": {"role": "assistant", "content": ...}, "finish_reason": ...}}), which is a
 * trainable assistant turn. Every problem is reported with the location of the bad trajectory.
 */
@ApplicationScoped
public class Trajectories {

    static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool");

    /** One turn of a conversation; {@code trainable} for the Choices the policy produced. */
    public record Turn(String role, String content, boolean trainable) {
    }

    public record Trajectory(List<Turn> turns, double reward, Map<String, Double> metrics) {
    }

    public record Group(List<Trajectory> trajectories) {
    }

    public record Summary(int count, double meanReward, double rewardStdDev, Map<String, Double> metrics) {
    }

    /**
     * The groups, checked. For training ({@code forTraining}) there must be at least one group, each of at least two
     * trajectories with a trainable assistant Choice; for logging, any non-empty group will do.
     */
    public List<Group> parse(List<ObjectNode> groups, boolean forTraining) {
        List<Violation> problems = new ArrayList<>();
        if (groups == null || groups.isEmpty()) {
            throw ApiException.invalid(Violation.of("At least one trajectory group is needed",
                    groups == null ? "missing" : "too_short", "body", "trajectory_groups"));
        }
        List<Group> parsed = new ArrayList<>();
        for (int g = 0; g < groups.size(); g++) {
            JsonNode group = groups.get(g);
            JsonNode list = group == null ? null : group.get("trajectories");
            if (list == null || !list.isArray()) {
                problems.add(Violation.of("Must have a list of trajectories", "list_type", "body", "trajectory_groups",
                        g, "trajectories"));
                continue;
            }
            int minimum = forTraining ? 2 : 1;
            if (list.size() < minimum) {
                problems.add(Violation.of(
                        forTraining ? "A group needs at least 2 trajectories (advantages are relative to the group)"
                                : "A group needs at least 1 trajectory",
                        "too_short", "body", "trajectory_groups", g, "trajectories"));
                continue;
            }
            List<Trajectory> trajectories = new ArrayList<>();
            for (int t = 0; t < list.size(); t++) {
                Trajectory trajectory = trajectory(list.get(t), forTraining, problems, g, t);
                if (trajectory != null) {
                    trajectories.add(trajectory);
                }
            }
            parsed.add(new Group(trajectories));
        }
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems.size() > 20 ? problems.subList(0, 20) : problems);
        }
        return parsed;
    }

    private static Trajectory trajectory(JsonNode node, boolean forTraining, List<Violation> problems, int g, int t) {
        Object[] at = { "body", "trajectory_groups", g, "trajectories", t };
        if (node == null || !node.isObject()) {
            problems.add(Violation.of("Must be a trajectory object", "dict_type", at));
            return null;
        }
        JsonNode reward = node.get("reward");
        int before = problems.size();
        if (reward == null || !reward.isNumber() || !Double.isFinite(reward.doubleValue())) {
            problems.add(Violation.of("A finite number is required", reward == null ? "missing" : "float_type",
                    append(at, "reward")));
        }
        JsonNode items = node.get("messages_and_choices");
        if (items == null || !items.isArray() || items.isEmpty()) {
            problems.add(Violation.of("Must be a non-empty list of messages and choices", "list_type",
                    append(at, "messages_and_choices")));
            return null;
        }
        List<Turn> turns = new ArrayList<>();
        boolean trainable = false;
        for (int m = 0; m < items.size(); m++) {
            JsonNode item = items.get(m);
            Object[] loc = append(at, "messages_and_choices", m);
            if (item == null || !item.isObject()) {
                problems.add(Violation.of("Must be a message or a choice object", "dict_type", loc));
                continue;
            }
            boolean choice = item.has("message") && item.get("message").isObject();
            JsonNode message = choice ? item.get("message") : item;
            String role = message.path("role").asText(null);
            if (role == null || !ROLES.contains(role)) {
                problems.add(Violation.of("role must be one of " + ROLES, "enum", append(loc, "role")));
                continue;
            }
            if (choice && !role.equals("assistant")) {
                problems.add(Violation.of("A choice's message must have role assistant", "value_error",
                        append(loc, "message", "role")));
                continue;
            }
            String content = text(message.get("content"));
            if (content == null) {
                if (message.has("tool_calls")) {
                    content = message.get("tool_calls").toString();
                } else {
                    problems.add(Violation.of("content must be text or a list of text parts", "string_type",
                            append(loc, "content")));
                    continue;
                }
            }
            turns.add(new Turn(role, content, choice));
            trainable |= choice;
        }
        // the numeric metrics become run-history keys ({split}/{name}), which the database stores as JSON text
        node.path("metrics").fieldNames().forEachRemaining(name -> {
            StorableText.Problem refused = StorableText.problem(name);
            if (refused != null && node.get("metrics").get(name).isNumber()) {
                problems.add(Violation.of(refused.message(), refused.type(), append(at, "metrics", name)));
            }
        });
        if (forTraining && !trainable && problems.size() == before) {
            problems.add(Violation.of("No trainable assistant turn: the policy's answers must be Choices",
                    "value_error", append(at, "messages_and_choices")));
        }
        if (problems.size() > before) {
            return null;
        }
        return new Trajectory(turns, reward.doubleValue(), TrainingModels.numbers(node.get("metrics")));
    }

    /** The text of a content field: a string, or the concatenated text parts of a list; null otherwise. */
    static String text(JsonNode content) {
        if (content == null || content.isNull()) {
            return null;
        }
        if (content.isTextual()) {
            return content.asText();
        }
        if (content.isArray()) {
            StringBuilder text = new StringBuilder();
            for (JsonNode part : content) {
                if (!part.path("text").isTextual()) {
                    return null;
                }
                text.append(part.get("text").asText());
            }
            return text.toString();
        }
        return null;
    }

    static Object[] append(Object[] loc, Object... more) {
        Object[] all = new Object[loc.length + more.length];
        System.arraycopy(loc, 0, all, 0, loc.length);
        System.arraycopy(more, 0, all, loc.length, more.length);
        return all;
    }

    static Summary summarize(List<Group> groups) {
        List<Double> rewards = new ArrayList<>();
        Map<String, double[]> sums = new LinkedHashMap<>();
        for (Group group : groups) {
            for (Trajectory trajectory : group.trajectories()) {
                rewards.add(trajectory.reward());
                trajectory.metrics().forEach((name, value) -> {
                    double[] sum = sums.computeIfAbsent(name, k -> new double[2]);
                    sum[0] += value;
                    sum[1]++;
                });
            }
        }
        double mean = rewards.stream().mapToDouble(Double::doubleValue).average().orElse(0);
        double variance = rewards.stream().mapToDouble(r -> (r - mean) * (r - mean)).average().orElse(0);
        Map<String, Double> metrics = new LinkedHashMap<>();
        sums.forEach((name, sum) -> metrics.put(name, sum[0] / sum[1]));
        return new Summary(rewards.size(), mean, Math.sqrt(variance), metrics);
    }
}
