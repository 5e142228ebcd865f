package dev.fulcrum.tiny;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Optimisation settings of one training call.
 *
 * @param learningRates
 *            AdamW step sizes: one for every gradient step, in order (ART's schedules), the last one holding for the
 *            steps after it; a single rate holds for all
 * @param batchSize
 *            examples (SFT) or trajectories (RL) per gradient step
 * @param epochs
 *            passes over the data
 */
public record TrainerConfig(List<Double> learningRates, int batchSize, int epochs) {

    public TrainerConfig {
        learningRates = List.copyOf(learningRates);
        // a schedule may reach 0 (ART's decaying schedules end there), but it must move the weights somewhere
        if (learningRates.isEmpty() || learningRates.stream().anyMatch(r -> !(r >= 0) || Double.isInfinite(r))
                || learningRates.stream().noneMatch(r -> r > 0)) {
            throw new IllegalArgumentException(
                    "learningRates must be numbers of at least 0, one of them greater: " + learningRates);
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be at least 1");
        }
        if (epochs < 1) {
            throw new IllegalArgumentException("epochs must be at least 1");
        }
    }

    /** One rate for every step. */
    public TrainerConfig(double learningRate, int batchSize, int epochs) {
        this(List.of(learningRate), batchSize, epochs);
    }

    /** The rate of gradient step {@code step} (counted from 0): its own in a schedule, else the last. */
    public double learningRate(int step) {
        return learningRates.get(Math.min(step, learningRates.size() - 1));
    }

    /**
     * The settings of a training job's {@code config} (checked at submission): {@code learning_rate} (a number, or a
     * schedule of one rate per gradient step), {@code batch_size}, {@code epochs}; the defaults for those absent.
     */
    public static TrainerConfig of(JsonNode config) {
        TrainerConfig defaults = defaults();
        JsonNode rate = config.path("learning_rate");
        List<Double> rates = new ArrayList<>();
        for (JsonNode value : rate.isArray() ? rate : List.of(rate)) {
            if (value.isNumber()) {
                rates.add(value.doubleValue());
            }
        }
        return new TrainerConfig(rates.isEmpty() ? defaults.learningRates() : rates,
                config.path("batch_size").asInt(defaults.batchSize()), config.path("epochs").asInt(defaults.epochs()));
    }

    /** Settings that suit the built-in model: learning rate 3e-3, batch size 4, one epoch. */
    public static TrainerConfig defaults() {
        return new TrainerConfig(3e-3, 4, 1);
    }
}
