package dev.fulcrum.automations;

/**
 * A webhook as other features refer to it: its id, its team ({@code teamEntityId} is the team's entity id, {@code team}
 * its name), its name and whether it currently sends.
 */
public record WebhookRef(long id, long teamEntityId, String team, String name, boolean enabled) {
}
