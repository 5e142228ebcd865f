package dev.fulcrum.support;

import java.util.Map;

import io.quarkus.test.junit.QuarkusTestProfile;

/**
 * Tiny limits, one application for the tests of every limit (one start instead of one each): JSON bodies of 2 KiB (4
 * KiB for a dataset's), artifact files of 1 KiB, two concurrent inference requests per project and a monthly quota of
 * 40 tokens.
 */
public class SmallLimits implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("fulcrum.datasets.max-request-bytes", "4096", "fulcrum.max-json-request-bytes", "2048",
                "fulcrum.artifacts.max-file-bytes", "1024", "fulcrum.inference.max-concurrent-requests-per-project",
                "2", "fulcrum.inference.monthly-token-quota", "40");
    }
}
