package dev.fulcrum.inference;

import java.util.List;
import java.util.Set;

/**
 * A backend that samples at the level of token ids (the Tinker API's {@code asample}): prompt tokens in; each sample's
 * tokens (the one that stopped it included), their log-probabilities under the model at temperature 1 (the model's own
 * distribution, before the sampler) and why it stopped out. Served by the GGUF engine.
 */
public interface TokenSampler {

    /**
     * What to sample: {@code seed + i} for sample i (null: random); only the {@code topK} likeliest tokens (null: all);
     * stop strings and tokens end a sample.
     */
    record Asked(int[] prompt, int samples, Integer maxTokens, Double temperature, Double topP, Integer topK, Long seed,
            Set<Integer> stopTokens, List<String> stopStrings, boolean promptLogprobs) {
    }

    /** One sample: its tokens, their log-probabilities, and {@code stop} or {@code length}. */
    record Sample(int[] tokens, float[] logprobs, String stopReason) {
    }

    /** The samples, and the prompt's log-probabilities (NaN at position 0) when asked, else null. */
    record Sampled(List<Sample> samples, float[] promptLogprobs) {
    }

    /**
     * Samples on the caller's thread; token ids outside the vocabulary and prompts longer than the context are an
     * {@link InferenceFailure} of kind {@code INVALID}.
     */
    Sampled sampleTokens(Asked asked);
}
