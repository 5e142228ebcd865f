package dev.fulcrum.tiny;

import java.util.Map;

/** Told about every gradient step once it has been applied; steps count from 1. */
@FunctionalInterface
public interface StepListener {

    void onStep(int step, int totalSteps, Map<String, Double> metrics);
}
