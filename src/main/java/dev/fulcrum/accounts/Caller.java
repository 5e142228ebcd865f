package dev.fulcrum.accounts;

/** The authenticated user of a request. */
public record Caller(long userId, String username, boolean admin, long apiKeyId) {
}
