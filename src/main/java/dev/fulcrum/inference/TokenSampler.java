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
     * stop strings and tokens end a sample; the prompt's log-probabilities when {@code promptLogprobs}, and the
     * {@code topkPromptLogprobs} likeliest tokens at each prompt position (0: none; at most {@link #MAX_TOP_PROMPT}).
     */
    record Asked(int[] prompt, int samples, Integer maxTokens, Double temperature, Double topP, Integer topK, Long seed,
            Set<Integer> stopTokens, List<String> stopStrings, boolean promptLogprobs, int topkPromptLogprobs) {
    }

    /** The most likeliest tokens a prompt position can be asked for. */
    int MAX_TOP_PROMPT = 20;

    /** The likeliest tokens at a position and their log-probabilities, the likeliest first. */
    record Top(int[] ids, float[] logprobs) {
    }

    /** One sample: its tokens, their log-probabilities, and {@code stop} or {@code length}. */
    record Sample(int[] tokens, float[] logprobs, String stopReason) {
    }

    /**
     * The samples; the prompt's log-probabilities (NaN at position 0) when asked, else null; the likeliest tokens at
     * each prompt position (null at position 0) when asked, else null.
     */
    record Sampled(List<Sample> samples, float[] promptLogprobs, List<Top> topkPromptLogprobs) {
    }

    /**
     * Samples on the caller's thread; token ids outside the vocabulary and prompts longer than the context are an
     * {@link InferenceFailure} of kind {@code INVALID}.
     */
    Sampled sampleTokens(Asked asked);
}
