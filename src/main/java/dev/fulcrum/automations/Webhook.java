package dev.fulcrum.automations;

import java.time.OffsetDateTime;

/** A team webhook's settings as stored; secrets are referenced by name only. */
public record Webhook(long id, long teamId, String team, String name, String url, String accessTokenSecret,
        String signingSecret, boolean enabled, String disabledReason, OffsetDateTime createdAt,
        OffsetDateTime updatedAt) {

    public WebhookRef ref() {
        return new WebhookRef(id, teamId, team, name, enabled);
    }
}
