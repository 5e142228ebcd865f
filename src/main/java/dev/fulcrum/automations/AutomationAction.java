package dev.fulcrum.automations;

/**
 * What an automation does when it fires: send its payload to a team's webhook, post a notification to a team's Slack
 * integration (the W&B SDK's {@code SendNotification}; {@link Notification}), or nothing (the W&B SDK's
 * {@code DoNothing}: the firing is recorded, nothing is sent, no team or webhook is named).
 */
public enum AutomationAction {
    WEBHOOKS, DO_NOTHING, NOTIFICATION
}
