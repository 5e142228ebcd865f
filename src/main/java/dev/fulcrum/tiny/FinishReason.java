package dev.fulcrum.tiny;

/** Why a generation ended. */
public enum FinishReason {
    /** The model emitted its end-of-turn token, a stop string matched, or the listener cancelled. */
    STOP,
    /** The token limit (or the context length) was reached. */
    LENGTH
}
