package dev.fulcrum.tiny;

/** The generated text, the token counts and why it ended. */
public record Generation(String text, int promptTokens, int completionTokens, FinishReason finishReason) {
}
