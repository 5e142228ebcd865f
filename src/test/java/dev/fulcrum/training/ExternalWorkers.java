package dev.fulcrum.training;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

import dev.fulcrum.support.RealModels;

/**
 * Training by external workers only (no CPU executor), one application for the tests that run {@code fulcrum-worker}
 * (one start instead of one each): the tiny Llama in its Hugging Face files ({@link FulcrumWorkerTest}) and as a GGUF
 * ({@link GgufLoraServingTest}), and SmolLM2-135M-Instruct's GGUF, which the catalog also serves
 * ({@link SmolLm2TrainingTest}); a 15-second lease.
 */
public class ExternalWorkers implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        String smolLm2 = "fulcrum.inference.models." + SmolLm2TrainingTest.BASE_MODEL;
        try {
            return Map.of("fulcrum.training.lease", "PT15S", "fulcrum.training.cpu-executor", "false",
                    "fulcrum.training.worker-base-models",
                    FulcrumWorkerTest.BASE_MODEL + "," + GgufLoraServingTest.BASE_MODEL,
                    // one entry: the catalog serves the GGUF, workers train it
                    smolLm2 + ".gguf", RealModels.smolLm2().toString(), smolLm2 + ".trainable", "true",
                    smolLm2 + ".context-size", "1024", smolLm2 + ".max-tokens", "64");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
