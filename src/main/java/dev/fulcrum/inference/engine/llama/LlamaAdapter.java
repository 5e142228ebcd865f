package dev.fulcrum.inference.engine.llama;

import com.sun.jna.Pointer;

/** A GGUF LoRA adapter loaded on a {@link LlamaModel} ({@code llama_adapter_lora}), applied by contexts. */
final class LlamaAdapter {

    private final String path;
    private Pointer adapter;

    private LlamaAdapter(String path, Pointer adapter) {
        this.path = path;
        this.adapter = adapter;
    }

    static LlamaAdapter load(LlamaModel model, String path) {
        Pointer adapter = LlamaApi.llama_adapter_lora_init(model.pointer(), path);
        if (adapter == null) {
            throw new IllegalStateException("llama.cpp could not load the adapter " + path + " on " + model.path()
                    + " (see the log for its reason)");
        }
        return new LlamaAdapter(path, adapter);
    }

    String path() {
        return path;
    }

    Pointer pointer() {
        return adapter;
    }

    void free() {
        if (adapter != null) {
            LlamaApi.llama_adapter_lora_free(adapter);
            adapter = null;
        }
    }
}
