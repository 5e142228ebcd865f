package dev.fulcrum.inference.engine.llama;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Disposes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import dev.fulcrum.inference.InferenceConfig;

/** The process's one {@link LlamaEngine}, configured by {@code fulcrum.inference.gguf.*} and freed at shutdown. */
@ApplicationScoped
class LlamaEngines {

    @Produces
    @Singleton
    LlamaEngine engine(InferenceConfig config) {
        return new LlamaEngine(config.gguf().idleUnload(), config.gguf().threadIdle(), config.gguf().memoryBudget(),
                config.gguf().maxContexts());
    }

    void close(@Disposes LlamaEngine engine) {
        engine.close();
    }
}
