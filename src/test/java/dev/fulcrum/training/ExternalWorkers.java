package dev.fulcrum.training;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

import dev.fulcrum.support.RealModels;

/**
 * Training by external workers only (no CPU executor), one application for the tests that run {@code fulcrum-worker}
 * (one start instead of one each): the tiny Llama in its Hugging Face files ({@link FulcrumWorkerTest}) and as a GGUF
 * ({@link GgufLoraServingTest}), SmolLM2-135M-Instruct's GGUF, which the catalog also serves
 * ({@link SmolLm2TrainingTest}, {@link TinkerSdkTest}), and the bases of {@link LoraServingTest}'s vLLM; a 15-second
 * lease for jobs and a 20-second one for Tinker models (a worker heartbeats every third of it, also while it loads the
 * base; with 8 seconds, one CI run never saw a worker hold its model).
 */
public class ExternalWorkers implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        String smolLm2 = "fulcrum.inference.models." + SmolLm2TrainingTest.BASE_MODEL;
        try {
            return Map.ofEntries(Map.entry("fulcrum.training.lease", "PT15S"),
                    Map.entry("fulcrum.tinker.lease", "PT20S"), Map.entry("fulcrum.training.cpu-executor", "false"),
                    Map.entry("fulcrum.training.worker-base-models",
                            String.join(",", FulcrumWorkerTest.BASE_MODEL, GgufLoraServingTest.BASE_MODEL,
                                    LoraServingTest.BASE_MODEL, LoraServingTest.DOWN_MODEL,
                                    LoraServingTest.REPLICATED_MODEL)),
                    // one entry: the catalog serves the GGUF, workers train it
                    Map.entry(smolLm2 + ".gguf", RealModels.smolLm2().toString()),
                    Map.entry(smolLm2 + ".trainable", "true"), Map.entry(smolLm2 + ".context-size", "1024"),
                    Map.entry(smolLm2 + ".max-tokens", "64"),
                    // where adapters are exported for engines that load a directory, and where vLLM sees them
                    Map.entry("fulcrum.inference.checkpoints.export-dir", LoraServingTest.EXPORT.toString()),
                    Map.entry("fulcrum.inference.checkpoints.server-dir", LoraServingTest.SERVER_DIR + "/"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
