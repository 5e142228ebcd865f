package dev.fulcrum.tiny;

import java.util.List;

/** Trajectories answering the same prompt; advantages are computed relative to the group. */
public record TrajectoryGroup(List<Trajectory> trajectories) {
}
