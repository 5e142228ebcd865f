package dev.fulcrum.tiny;

/** One message of a training conversation; trainable assistant turns (and their end-of-turn token) get the loss. */
public record TrainingTurn(String role, String content, boolean trainable) {
}
