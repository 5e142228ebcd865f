package dev.fulcrum.tiny;

import java.util.List;

/** A conversation the model took part in and the reward it earned. */
public record Trajectory(List<TrainingTurn> turns, double reward) {
}
