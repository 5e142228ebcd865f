package dev.fulcrum.automations;

import java.util.Set;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * What a {@code NOTIFICATION} automation (the W&B SDK's {@code SendNotification}) posts to its Slack integration: a
 * title and a message, each with the event's variables (<code>${run_name}</code> ...), and a severity ({@code INFO},
 * {@code WARN}, {@code ERROR}). Stored as the automation's payload, JSON {@code {"title", "message", "severity"}}, so
 * that the payload's template renders it ({@link PayloadTemplate}: variables are replaced inside the strings only).
 */
public record Notification(String title, String message, String severity) {

    public static final Set<String> SEVERITIES = Set.of("INFO", "WARN", "ERROR");
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The notification as the payload it is stored as. */
    public String toJson() {
        ObjectNode node = JSON.createObjectNode();
        node.put("title", title == null ? "" : title);
        node.put("message", message == null ? "" : message);
        node.put("severity", severity == null ? "INFO" : severity);
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("An object of strings does not serialize", e);
        }
    }

    /** A stored (or rendered) payload as a notification. */
    public static Notification fromJson(String json) {
        try {
            JsonNode node = JSON.readTree(json);
            return new Notification(node.path("title").asText(""), node.path("message").asText(""),
                    node.path("severity").asText("INFO"));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A stored notification does not parse", e);
        }
    }

    /**
     * The body of Slack's {@code chat.postMessage} for this (rendered) notification: the channel and a {@code mrkdwn}
     * text, the title in bold after a sign of the severity (none for {@code INFO}), then the message. Slack's control
     * characters ({@code &}, {@code <}, {@code >}) are escaped, so a value cannot mention or link anyone.
     */
    public String slackBody(String channel) {
        String sign = switch (severity == null ? "INFO" : severity) {
            case "WARN" -> ":warning: ";
            case "ERROR" -> ":rotating_light: ";
            default -> "";
        };
        String head = title == null || title.isEmpty() ? "" : sign + "*" + escape(title) + "*";
        String body = message == null || message.isEmpty() ? "" : escape(message);
        String text = head.isEmpty() ? sign + body : body.isEmpty() ? head : head + "\n" + body;
        ObjectNode node = JSON.createObjectNode();
        node.put("channel", channel);
        node.put("text", text);
        node.put("mrkdwn", true);
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("An object of strings does not serialize", e);
        }
    }

    /**
     * A {@link #slackBody} posted to {@code channel} instead: a delivery is rendered when its event happens, and posted
     * to the channel its integration has when it is sent.
     */
    static String toChannel(String slackBody, String channel) {
        try {
            ObjectNode node = (ObjectNode) JSON.readTree(slackBody);
            if (channel.equals(node.path("channel").asText(null))) {
                return slackBody;
            }
            node.put("channel", channel);
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException | ClassCastException e) {
            throw new IllegalStateException("A queued Slack message does not parse", e);
        }
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
