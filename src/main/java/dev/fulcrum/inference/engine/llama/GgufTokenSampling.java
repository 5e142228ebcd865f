package dev.fulcrum.inference.engine.llama;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.TokenSampler.Asked;
import dev.fulcrum.inference.TokenSampler.Sample;
import dev.fulcrum.inference.TokenSampler.Sampled;
import dev.fulcrum.inference.TokenSampler.Top;
import dev.fulcrum.platform.errors.ApiException.Kind;

/**
 * Token-level sampling of a GGUF model (the Tinker API's {@code asample}): prompt tokens in; each sample's tokens (the
 * one that stopped it included), their log-probabilities under the model at temperature 1 (the model's own
 * distribution, before the sampler) and why it stopped out. Runs on the caller's thread, decoded with the engine's
 * other sequences in its batches.
 */
final class GgufTokenSampling {

    private static final long POLL_MS = 100;

    private GgufTokenSampling() {
    }

    /** Samples from {@code backend} (a GGUF model of the catalog, or a checkpoint: the model with its adapter). */
    static Sampled sample(GgufBackend backend, Asked asked) {
        try (LlamaEngine.Lease lease = backend.lease()) {
            LlamaModel model = lease.model();
            GgufBackend.checkTokens(List.of(asked.prompt()), model, "prompt", backend.id);
            int[][] targets = targets(asked, model, backend.id);
            int limit = backend.limit(asked.maxTokens(), asked.prompt().length, "max_tokens");
            List<Sample> samples = new ArrayList<>();
            float[] prompt = null;
            List<Top> top = null;
            float[][] targeted = null;
            int k = asked.topkPromptLogprobs();
            int kSample = asked.topkSampleLogprobs();
            // the first prompt token whose logits are read: the first asked for, or the first target's
            int from = asked.promptLogprobs() || k > 0 ? asked.firstScored() : asked.prompt().length;
            for (int t = 1; targets != null && t < from; t++) {
                if (targets[t] != null) {
                    from = t;
                }
            }
            for (int i = 0; i < asked.samples(); i++) {
                Long seed = asked.seed() == null ? null : asked.seed() + i;
                // the engine's top logprobs (those of OpenAI's API): of the prompt (read from the first sample's
                // scoring, from the first position asked for) and of each generated token, from the same
                // log-softmax as the token's own logprob; the targets' from the same log-softmax as the prompt's
                int alternatives = Math.max(i == 0 ? k : 0, kSample);
                Generation generation = lease.generate(backend.loraPath, backend.shape,
                        new Generation(asked.prompt(),
                                Sampling.of(asked.temperature(), asked.topP(), seed)
                                        .withTopK(asked.topK() == null ? 0 : asked.topK()),
                                limit, alternatives, true).scoring(i == 0 ? from : asked.prompt().length,
                                        i == 0 ? targets : null));
                List<Generation.Token> tokens = new ArrayList<>();
                ByteArrayOutputStream text = new ByteArrayOutputStream();
                boolean stopped = false;
                Generation.End end;
                while (true) {
                    Object event;
                    try {
                        event = generation.next(POLL_MS);
                    } catch (InterruptedException e) {
                        generation.cancel();
                        Thread.currentThread().interrupt();
                        throw new InferenceFailure(Kind.UNAVAILABLE, "Sampling was stopped", null, "model_unavailable",
                                1);
                    }
                    if (event == null) {
                        continue;
                    }
                    if (event instanceof Generation.End ended) {
                        end = ended;
                        break;
                    }
                    if (event instanceof Generation.Prompt scored) {
                        if (targeted == null && targets != null) {
                            targeted = targeted(asked.targetPromptLogprobs(), scored.targets());
                        }
                        if (prompt == null && asked.promptLogprobs()) {
                            prompt = new float[scored.tokens().size()];
                            for (int t = 0; t < prompt.length; t++) {
                                prompt[t] = t == 0 ? Float.NaN : scored.tokens().get(t).logprob();
                            }
                        }
                        if (top == null && k > 0) {
                            top = new ArrayList<>();
                            for (int t = 0; t < scored.tokens().size(); t++) {
                                Generation.Token at = scored.tokens().get(t);
                                top.add(t == 0 ? null : top(at, k));
                            }
                        }
                        continue;
                    }
                    Generation.Token token = (Generation.Token) event;
                    if (stopped) {
                        continue;
                    }
                    tokens.add(token);
                    text.writeBytes(token.piece());
                    if (asked.stopTokens().contains(token.id()) || containsStop(text, asked.stopStrings())) {
                        stopped = true;
                        generation.cancel();
                    }
                }
                if ("error".equals(end.reason())) {
                    throw new InferenceFailure(Kind.UNAVAILABLE,
                            "The model '" + backend.id + "' failed: " + end.message(), null, "model_unavailable", 1);
                }
                if (!stopped && end.endToken() != null) {
                    tokens.add(end.endToken()); // the end-of-generation token is part of the sample
                }
                int[] ids = new int[tokens.size()];
                float[] logprobs = new float[tokens.size()];
                List<Top> sampleTop = kSample > 0 ? new ArrayList<>() : null;
                for (int t = 0; t < ids.length; t++) {
                    ids[t] = tokens.get(t).id();
                    logprobs[t] = tokens.get(t).logprob();
                    if (sampleTop != null) {
                        sampleTop.add(top(tokens.get(t), kSample));
                    }
                }
                samples.add(new Sample(ids, logprobs, stopped || "stop".equals(end.reason()) ? "stop" : "length",
                        sampleTop));
            }
            return new Sampled(samples, prompt, top, targeted);
        }
    }

    /**
     * The asked target ids per prompt token ({@code [t]} for token {@code t}; null where none is asked), or null when
     * none are; ids outside the vocabulary are the caller's error, as the prompt's are.
     */
    private static int[][] targets(Asked asked, LlamaModel model, String modelId) {
        if (asked.targetPromptLogprobs() == null) {
            return null;
        }
        int[][] targets = new int[asked.prompt().length][];
        for (int i = 0; i < asked.targetPromptLogprobs().length; i++) {
            int[] row = asked.targetPromptLogprobs()[i];
            for (int id : row) {
                if (id >= model.vocabSize()) {
                    throw InferenceFailure.invalid("target_prompt_logprobs",
                            "'target_prompt_logprobs' holds the token id " + id
                                    + " outside the vocabulary of the model '" + modelId + "' (ids 0 to "
                                    + (model.vocabSize() - 1) + ")");
                }
                if (id >= 0) {
                    targets[i + 1] = row;
                }
            }
        }
        return targets;
    }

    /** The engine's target log probabilities in the asked shape: 0 in rows where nothing was asked. */
    private static float[][] targeted(int[][] asked, float[][] scored) {
        float[][] values = new float[asked.length][];
        for (int i = 0; i < asked.length; i++) {
            values[i] = scored[i + 1] != null ? scored[i + 1] : new float[asked[i].length];
        }
        return values;
    }

    /** The {@code k} likeliest tokens the engine reported with a token, or null when it reported none. */
    private static Top top(Generation.Token token, int k) {
        return token.topIds() == null ? null : new Top(token.topIds(), token.topLogprobs()).first(k);
    }

    private static boolean containsStop(ByteArrayOutputStream text, List<String> stops) {
        if (stops.isEmpty()) {
            return false;
        }
        String decoded = text.toString(StandardCharsets.UTF_8);
        for (String stop : stops) {
            if (!stop.isEmpty() && decoded.contains(stop)) {
                return true;
            }
        }
        return false;
    }
}
