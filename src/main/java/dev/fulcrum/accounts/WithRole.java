package dev.fulcrum.accounts;

/** A team or registry together with the caller's effective role on it. */
public record WithRole<T>(T value, Role role) {
}
