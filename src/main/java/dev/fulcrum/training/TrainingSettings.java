package dev.fulcrum.training;

import java.time.Duration;
import java.util.List;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Configuration of models, training jobs and their executors ({@code fulcrum.training.*}). */
@ConfigMapping(prefix = "fulcrum.training")
public interface TrainingSettings {

    /** Base models trained by the built-in CPU executor: the id of the inference catalog's built-in model. */
    @WithDefault("${fulcrum.inference.builtin.id}")
    List<String> builtinBaseModels();

    /** Base models trained by external GPU workers; "none" when there are no workers. */
    @WithDefault("none")
    List<String> workerBaseModels();

    /** Whether this replica runs the built-in CPU executor. */
    @WithDefault("true")
    boolean cpuExecutor();

    /**
     * How often the CPU executor and the lease sweeper look for work. The only default: the executor's
     * {@code @Scheduled(every = "${fulcrum.training.poll-interval}")} reads this property, so the value must also be
     * scheduler syntax ({@code 1s}, {@code 0.5s}).
     */
    @WithDefault("1s")
    Duration pollInterval();

    /** How long a claimed job stays with its executor without a heartbeat. */
    @WithDefault("60s")
    Duration lease();

    /** How many times a job is started before a lost lease fails it (2 = one retry). */
    @WithDefault("2")
    int maxAttempts();

    /** Longest wait of a worker's claim request (long poll). */
    @WithDefault("25s")
    Duration claimWait();

    /** Lifetime of the job-scoped token a worker gets with a claim. */
    @WithDefault("24h")
    Duration workerTokenLifetime();

    /** Largest SFT data file read from an artifact, in bytes. */
    @WithDefault("67108864")
    long maxTrainingDataBytes();

    /** Largest checkpoint file a worker may upload, in bytes. */
    @WithDefault("5368709120")
    long maxCheckpointFileBytes();

    default boolean isBuiltin(String baseModel) {
        return builtinBaseModels().contains(baseModel);
    }

    default boolean isWorkerModel(String baseModel) {
        return !"none".equals(baseModel) && workerBaseModels().contains(baseModel);
    }
}
