package dev.fulcrum.inference;

import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * A backend that samples at the level of token ids (the Tinker API's {@code asample}): prompt tokens in; each sample's
 * tokens (the one that stopped it included), their log-probabilities under the model at temperature 1 (the model's own
 * distribution, before the sampler) and why it stopped out. Served by the GGUF engine and by vLLM (which cannot read
 * arbitrary target tokens' log-probabilities).
 */
public interface TokenSampler {

    /**
     * What to sample: {@code seed + i} for sample i (null: random); only the {@code topK} likeliest tokens (null: all);
     * stop strings and tokens end a sample; the prompt's log-probabilities when {@code promptLogprobs}, the
     * {@code topkPromptLogprobs} likeliest tokens at each prompt position and the {@code topkSampleLogprobs} likeliest
     * at each sampled one (0: none; at most {@link #MAX_TOP}); {@code promptLogprobsLastN}: only the last N prompt
     * positions' log-probabilities and top tokens are needed (null: all); {@code targetPromptLogprobs}: per prompt
     * position from 1 (row {@code i} for position {@code i + 1}) the token ids whose log-probabilities to read there,
     * -1 for none (null: none asked).
     */
    record Asked(int[] prompt, int samples, Integer maxTokens, Double temperature, Double topP, Integer topK, Long seed,
            Set<Integer> stopTokens, List<String> stopStrings, boolean promptLogprobs, int topkPromptLogprobs,
            int topkSampleLogprobs, Integer promptLogprobsLastN, int[][] targetPromptLogprobs) {

        /** The first prompt position whose log-probabilities and top tokens are needed. */
        public int firstScored() {
            return promptLogprobsLastN == null ? 1 : prompt.length - promptLogprobsLastN;
        }
    }

    /** The most likeliest tokens a prompt or sampled position can be asked for. */
    int MAX_TOP = 20;

    /** The likeliest tokens at a position and their log-probabilities, the likeliest first. */
    record Top(int[] ids, float[] logprobs) {

        /** The {@code k} likeliest of these. */
        public Top first(int k) {
            return k >= ids.length ? this : new Top(Arrays.copyOf(ids, k), Arrays.copyOf(logprobs, k));
        }
    }

    /**
     * One sample: its tokens, their log-probabilities, {@code stop} or {@code length}, and the likeliest tokens at each
     * of its positions (the distribution its token was drawn from; a null entry where none were reported) when asked,
     * else null.
     */
    record Sample(int[] tokens, float[] logprobs, String stopReason, List<Top> topLogprobs) {
    }

    /**
     * The samples; the prompt's log-probabilities (NaN at position 0) when asked, else null; the likeliest tokens at
     * each prompt position (null at position 0) when asked, else null; the log-probabilities of the asked target
     * tokens, in the shape they were asked in (0 where -1 was asked), else null.
     */
    record Sampled(List<Sample> samples, float[] promptLogprobs, List<Top> topkPromptLogprobs,
            float[][] targetPromptLogprobs) {
    }

    /**
     * Samples on the caller's thread; token ids outside the vocabulary and prompts longer than the context are an
     * {@link InferenceFailure} of kind {@code INVALID}.
     */
    Sampled sampleTokens(Asked asked);
}
