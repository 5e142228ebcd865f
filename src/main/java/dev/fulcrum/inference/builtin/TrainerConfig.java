package dev.fulcrum.inference.builtin;

/**
 * Optimisation settings of one training call.
 *
 * @param learningRate
 *            AdamW step size
 * @param batchSize
 *            examples (SFT) or trajectories (RL) per gradient step
 * @param epochs
 *            passes over the data
 */
public record TrainerConfig(double learningRate, int batchSize, int epochs) {

    public TrainerConfig {
        if (!(learningRate > 0) || Double.isInfinite(learningRate)) {
            throw new IllegalArgumentException("learningRate must be a positive number");
        }
        if (batchSize < 1) {
            throw new IllegalArgumentException("batchSize must be at least 1");
        }
        if (epochs < 1) {
            throw new IllegalArgumentException("epochs must be at least 1");
        }
    }

    /** Settings that suit the built-in model: learning rate 3e-3, batch size 4, one epoch. */
    public static TrainerConfig defaults() {
        return new TrainerConfig(3e-3, 4, 1);
    }
}
