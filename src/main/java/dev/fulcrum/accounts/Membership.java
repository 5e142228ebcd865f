package dev.fulcrum.accounts;

import java.time.OffsetDateTime;

/** A user's role on a team or registry, and since when the user holds a role there. */
public record Membership(String username, Role role, OffsetDateTime since) {
}
