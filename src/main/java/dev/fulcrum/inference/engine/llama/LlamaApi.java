package dev.fulcrum.inference.engine.llama;

import com.sun.jna.Callback;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import com.sun.jna.Structure;

/**
 * llama.cpp's C API ({@code llama.h}) at build 4916 (commit {@code c6af2161}), the build inside the natives of the
 * {@code de.kherud:llama} 4.2.0 jar, bound by JNA's direct mapping. Only what the engine calls is declared. The structs
 * are that build's layouts, which differ from later headers (no {@code tensor_buft_overrides} in the model parameters;
 * {@code defrag_thold}, {@code cb_eval} and {@code logits_all} still in the context parameters): {@link LlamaNatives}
 * checks their sizes against JNA's and the defaults the library returns before anything else is called. C's
 * {@code bool} is one byte: declared {@code byte} in structs and as {@code boolean} arguments (JNA passes those as C
 * ints, which the x86-64 and AArch64 calling conventions read as the low byte).
 */
final class LlamaApi {

    private LlamaApi() {
    }

    static void register(NativeLibrary library) {
        com.sun.jna.Native.register(LlamaApi.class, library);
    }

    /** {@code struct llama_model_params}, 64 bytes on 64-bit platforms at b4916. */
    @Structure.FieldOrder({ "devices", "n_gpu_layers", "split_mode", "main_gpu", "tensor_split", "progress_callback",
            "progress_callback_user_data", "kv_overrides", "vocab_only", "use_mmap", "use_mlock", "check_tensors" })
    public static class ModelParams extends Structure implements Structure.ByValue {
        public Pointer devices;
        public int n_gpu_layers;
        public int split_mode;
        public int main_gpu;
        public Pointer tensor_split;
        public Pointer progress_callback;
        public Pointer progress_callback_user_data;
        public Pointer kv_overrides;
        public byte vocab_only;
        public byte use_mmap;
        public byte use_mlock;
        public byte check_tensors;
    }

    /** {@code struct llama_context_params}, 120 bytes on 64-bit platforms at b4916. */
    @Structure.FieldOrder({ "n_ctx", "n_batch", "n_ubatch", "n_seq_max", "n_threads", "n_threads_batch",
            "rope_scaling_type", "pooling_type", "attention_type", "rope_freq_base", "rope_freq_scale",
            "yarn_ext_factor", "yarn_attn_factor", "yarn_beta_fast", "yarn_beta_slow", "yarn_orig_ctx", "defrag_thold",
            "cb_eval", "cb_eval_user_data", "type_k", "type_v", "logits_all", "embeddings", "offload_kqv", "flash_attn",
            "no_perf", "abort_callback", "abort_callback_data" })
    public static class ContextParams extends Structure implements Structure.ByValue {
        public int n_ctx;
        public int n_batch;
        public int n_ubatch;
        public int n_seq_max;
        public int n_threads;
        public int n_threads_batch;
        public int rope_scaling_type;
        public int pooling_type;
        public int attention_type;
        public float rope_freq_base;
        public float rope_freq_scale;
        public float yarn_ext_factor;
        public float yarn_attn_factor;
        public float yarn_beta_fast;
        public float yarn_beta_slow;
        public int yarn_orig_ctx;
        public float defrag_thold;
        public Pointer cb_eval;
        public Pointer cb_eval_user_data;
        public int type_k;
        public int type_v;
        public byte logits_all;
        public byte embeddings;
        public byte offload_kqv;
        public byte flash_attn;
        public byte no_perf;
        public Pointer abort_callback;
        public Pointer abort_callback_data;
    }

    /**
     * {@code struct llama_batch} (56 bytes): arrays of {@code n_tokens} tokens, positions, sequence ids and logit
     * flags, allocated by {@link #llama_batch_init} and written in place by {@link Batch}.
     */
    @Structure.FieldOrder({ "n_tokens", "token", "embd", "pos", "n_seq_id", "seq_id", "logits" })
    public static class BatchStruct extends Structure implements Structure.ByValue {
        public int n_tokens;
        public Pointer token;
        public Pointer embd;
        public Pointer pos;
        public Pointer n_seq_id;
        public Pointer seq_id;
        public Pointer logits;
    }

    /** {@code struct llama_sampler_chain_params}: one bool. */
    @Structure.FieldOrder({ "no_perf" })
    public static class SamplerChainParams extends Structure implements Structure.ByValue {
        public byte no_perf;
    }

    /** {@code ggml_log_callback}: {@code void (*)(enum ggml_log_level level, const char * text, void * user_data)}. */
    public interface LogCallback extends Callback {
        void log(int level, Pointer text, Pointer userData);
    }

    // the library
    static native void llama_backend_init();

    static native void llama_log_set(LogCallback callback, Pointer userData);

    static native ModelParams llama_model_default_params();

    static native ContextParams llama_context_default_params();

    static native SamplerChainParams llama_sampler_chain_default_params();

    // models
    static native Pointer llama_model_load_from_file(String path, ModelParams params);

    static native void llama_model_free(Pointer model);

    static native Pointer llama_model_get_vocab(Pointer model);

    static native Pointer llama_model_chat_template(Pointer model, String name);

    static native int llama_model_meta_val_str(Pointer model, String key, byte[] buffer, long size);

    static native int llama_model_n_embd(Pointer model);

    // the vocabulary
    static native int llama_vocab_n_tokens(Pointer vocab);

    static native int llama_tokenize(Pointer vocab, byte[] text, int textLength, int[] tokens, int maxTokens,
            boolean addSpecial, boolean parseSpecial);

    static native int llama_token_to_piece(Pointer vocab, int token, byte[] buffer, int length, int lstrip,
            boolean special);

    static native byte llama_vocab_is_eog(Pointer vocab, int token);

    static native int llama_vocab_bos(Pointer vocab);

    static native byte llama_vocab_get_add_bos(Pointer vocab);

    static native int llama_vocab_eos(Pointer vocab);

    static native Pointer llama_vocab_get_text(Pointer vocab, int token);

    // contexts
    static native Pointer llama_init_from_model(Pointer model, ContextParams params);

    static native void llama_free(Pointer context);

    static native int llama_decode(Pointer context, BatchStruct batch);

    static native Pointer llama_get_logits_ith(Pointer context, int i);

    static native Pointer llama_get_embeddings_seq(Pointer context, int seq);

    static native byte llama_kv_self_seq_rm(Pointer context, int seq, int p0, int p1);

    static native void llama_kv_self_clear(Pointer context);

    static native int llama_kv_self_used_cells(Pointer context);

    // batches
    static native BatchStruct llama_batch_init(int tokens, int embd, int seqMax);

    static native void llama_batch_free(BatchStruct batch);

    // LoRA adapters
    static native Pointer llama_adapter_lora_init(Pointer model, String path);

    static native void llama_adapter_lora_free(Pointer adapter);

    static native int llama_set_adapter_lora(Pointer context, Pointer adapter, float scale);

    // samplers
    static native Pointer llama_sampler_chain_init(SamplerChainParams params);

    static native void llama_sampler_chain_add(Pointer chain, Pointer sampler);

    static native Pointer llama_sampler_init_greedy();

    static native Pointer llama_sampler_init_dist(int seed);

    static native Pointer llama_sampler_init_top_p(float p, long minKeep);

    static native Pointer llama_sampler_init_top_k(int k);

    static native Pointer llama_sampler_init_temp(float t);

    static native Pointer llama_sampler_init_penalties(int lastN, float repeat, float frequency, float present);

    static native Pointer llama_sampler_init_logit_bias(int vocabSize, int count, Pointer biases);

    static native Pointer llama_sampler_init_grammar(Pointer vocab, String grammar, String root);

    static native Pointer llama_sampler_init_grammar_lazy_patterns(Pointer vocab, String grammar, String root,
            Pointer triggerPatterns, long triggerPatternCount, Pointer triggerTokens, long triggerTokenCount);

    static native int llama_sampler_sample(Pointer sampler, Pointer context, int i);

    /** Applies a sampler to a {@code llama_token_data_array} (a grammar sets the logits of what it refuses to -inf). */
    static native void llama_sampler_apply(Pointer sampler, Pointer candidates);

    static native void llama_sampler_accept(Pointer sampler, int token);

    static native void llama_sampler_free(Pointer sampler);
}
