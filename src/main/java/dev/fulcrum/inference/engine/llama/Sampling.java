package dev.fulcrum.inference.engine.llama;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

/**
 * How one sequence picks its tokens, as a llama.cpp sampler chain: logit biases, repetition penalties, the grammar
 * (whole-answer, or lazy: free text until one of {@code triggers} appears, then constrained), then greedy when
 * {@code temperature} is 0, else top-k (the Tinker API's; 0: none), top-p, temperature and a seeded draw: OpenAI's
 * parameters, with no min-p.
 *
 * @param seed
 *            the draw's seed, or null for a random one
 * @param grammar
 *            a GBNF grammar (root {@code root}) or null
 * @param triggers
 *            words that start a lazy grammar (the grammar applies from the first of them on), or empty for a grammar
 *            over the whole answer
 */
public record Sampling(double temperature, double topP, Long seed, double presencePenalty, double frequencyPenalty,
        Map<Integer, Float> logitBias, String grammar, List<String> triggers, int topK) {

    /** OpenAI's defaults with the given temperature and top-p (null: 1). */
    public static Sampling of(Double temperature, Double topP, Long seed) {
        return new Sampling(temperature == null ? 1 : temperature, topP == null ? 1 : topP, seed, 0, 0, Map.of(), null,
                List.of(), 0);
    }

    public Sampling withPenalties(double presence, double frequency) {
        return new Sampling(temperature, topP, seed, presence, frequency, logitBias, grammar, triggers, topK);
    }

    public Sampling withLogitBias(Map<Integer, Float> bias) {
        return new Sampling(temperature, topP, seed, presencePenalty, frequencyPenalty, Map.copyOf(bias), grammar,
                triggers, topK);
    }

    public Sampling withGrammar(String grammar, List<String> triggers) {
        return new Sampling(temperature, topP, seed, presencePenalty, frequencyPenalty, logitBias, grammar,
                List.copyOf(triggers), topK);
    }

    /** Only the {@code k} likeliest tokens are drawn from (0: all). */
    public Sampling withTopK(int k) {
        return new Sampling(temperature, topP, seed, presencePenalty, frequencyPenalty, logitBias, grammar, triggers,
                k);
    }

    public boolean greedy() {
        return temperature <= 0;
    }

    /**
     * The pattern the whole text generated so far must match for a lazy grammar to start: any text, then one of
     * {@code words} (the grammar applies from there on), then anything.
     */
    static String triggerPattern(List<String> words) {
        StringBuilder pattern = new StringBuilder("^[\\s\\S]*?(");
        for (int i = 0; i < words.size(); i++) {
            if (i > 0) {
                pattern.append('|');
            }
            for (char c : words.get(i).toCharArray()) {
                if (".^$|()*+?[]{}\\".indexOf(c) >= 0) {
                    pattern.append('\\');
                }
                pattern.append(c);
            }
        }
        return pattern.append(")[\\s\\S]*").toString();
    }

    /** Whether the request asks for a reproducible answer (greedy or seeded), which no reused prompt may change. */
    public boolean reproducible() {
        return greedy() || seed != null;
    }

    /**
     * The chain for {@code model}; the caller frees it ({@code llama_sampler_free}). Throws
     * {@link IllegalArgumentException} when llama.cpp refuses the grammar.
     */
    Pointer chain(LlamaModel model) {
        LlamaApi.SamplerChainParams params = LlamaApi.llama_sampler_chain_default_params();
        params.no_perf = 1;
        Pointer chain = LlamaApi.llama_sampler_chain_init(params);
        try {
            if (!logitBias.isEmpty()) {
                Memory biases = new Memory(8L * logitBias.size());
                int i = 0;
                for (Map.Entry<Integer, Float> bias : logitBias.entrySet()) {
                    biases.setInt(8L * i, bias.getKey());
                    biases.setFloat(8L * i + 4, bias.getValue());
                    i++;
                }
                add(chain, LlamaApi.llama_sampler_init_logit_bias(model.vocabSize(), logitBias.size(), biases));
            }
            if (presencePenalty != 0 || frequencyPenalty != 0) {
                add(chain, LlamaApi.llama_sampler_init_penalties(64, 1f, (float) frequencyPenalty,
                        (float) presencePenalty));
            }
            if (grammar != null) {
                Pointer sampler;
                if (triggers.isEmpty()) {
                    sampler = LlamaApi.llama_sampler_init_grammar(model.vocab(), grammar, "root");
                } else {
                    // llama.cpp's trigger words never fire in this build: the same words as its trigger pattern
                    byte[] bytes = triggerPattern(triggers).getBytes(StandardCharsets.UTF_8);
                    Memory pattern = new Memory(bytes.length + 1L);
                    pattern.write(0, bytes, 0, bytes.length);
                    pattern.setByte(bytes.length, (byte) 0);
                    Memory patterns = new Memory(Native.POINTER_SIZE);
                    patterns.setPointer(0, pattern);
                    sampler = LlamaApi.llama_sampler_init_grammar_lazy_patterns(model.vocab(), grammar, "root",
                            patterns, 1, null, 0);
                }
                if (sampler == null) {
                    throw new IllegalArgumentException("llama.cpp refused the grammar");
                }
                add(chain, sampler);
            }
            if (greedy()) {
                add(chain, LlamaApi.llama_sampler_init_greedy());
            } else {
                if (topK > 0) {
                    add(chain, LlamaApi.llama_sampler_init_top_k(topK));
                }
                if (topP < 1) {
                    add(chain, LlamaApi.llama_sampler_init_top_p((float) topP, 1));
                }
                add(chain, LlamaApi.llama_sampler_init_temp((float) temperature));
                int draw = seed == null ? (int) (Math.random() * Integer.MAX_VALUE) : (int) (seed & 0xffffffffL);
                add(chain, LlamaApi.llama_sampler_init_dist(draw));
            }
            return chain;
        } catch (RuntimeException e) {
            LlamaApi.llama_sampler_free(chain);
            throw e;
        }
    }

    private static void add(Pointer chain, Pointer sampler) {
        LlamaApi.llama_sampler_chain_add(chain, sampler);
    }
}
