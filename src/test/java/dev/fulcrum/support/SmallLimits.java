package dev.fulcrum.support;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * Tiny limits, one application for the tests of every limit (one start instead of one each): JSON bodies of 2 KiB (4
 * KiB for a dataset's), artifact files of 1 KiB, two concurrent inference requests per project and a monthly quota of
 * 40 tokens (Tinker work's tokens too); two live Tinker training clients per entity; and a training lease of 3 s with
 * no built-in executor, so that the worker protocol's tests decide who claims what, on two worker base models.
 */
public class SmallLimits implements QuarkusTestProfile {

    /** {@code fulcrum.max-json-request-bytes} */
    public static final int JSON_LIMIT = 2048;

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.ofEntries(Map.entry("fulcrum.datasets.max-request-bytes", "4096"),
                Map.entry("fulcrum.max-json-request-bytes", String.valueOf(JSON_LIMIT)),
                Map.entry("fulcrum.artifacts.max-file-bytes", "1024"),
                Map.entry("fulcrum.inference.max-concurrent-requests-per-project", "2"),
                Map.entry("fulcrum.inference.monthly-token-quota", "40"), Map.entry("fulcrum.training.lease", "PT3S"),
                Map.entry("fulcrum.tinker.max-live-models-per-entity", "2"),
                Map.entry("fulcrum.training.cpu-executor", "false"), Map.entry("fulcrum.training.worker-base-models",
                        "example/gpu-base,example/other-base,example/gone-base"));
    }
}
