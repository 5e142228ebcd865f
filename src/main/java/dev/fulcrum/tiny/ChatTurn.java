package dev.fulcrum.tiny;

/**
 * One message of a conversation: a role ({@code system}, {@code user}, {@code assistant}, {@code tool}, ...) and its
 * text.
 */
public record ChatTurn(String role, String content) {
}
