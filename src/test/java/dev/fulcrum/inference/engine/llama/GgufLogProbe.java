package dev.fulcrum.inference.engine.llama;

import java.time.Duration;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.template.ChatTemplate;

import de.kherud.llama.ModelParameters;
import de.kherud.llama.args.PoolingType;

/**
 * A JVM of its own for {@link GgufLogTest} (its stdout and stderr are llama.cpp's too): loads a GGUF file with
 * Fulcrum's engine ({@code fulcrum}) or with the bindings' server and its own log ({@code bindings}), then chats and
 * embeds a text holding the marker. Arguments: the file, the mode, the marker.
 */
final class GgufLogProbe {

    private GgufLogProbe() {
    }

    public static void main(String[] args) throws Exception {
        String marker = args[2];
        if ("fulcrum".equals(args[1])) {
            try (LlamaEngine engine = new LlamaEngine(Duration.ofMinutes(1), 0, 2);
                    LlamaEngine.Lease lease = engine.lease(args[0])) {
                LlamaModel model = lease.model();
                LlamaEngine.Shape shape = new LlamaEngine.Shape(1, 512, 1);
                String prompt = ChatTemplate
                        .of(model.chatTemplate(), model.tokenText(model.bos()), model.tokenText(model.eos()))
                        .render(new JsonArray()
                                .add(new JsonObject().put("role", "user").put("content", "Tell me about " + marker)),
                                null, true);
                Generation generation = lease.generate(null, shape,
                        new Generation(GgufBackend.promptTokens(model, prompt), Sampling.of(0.0, null, null), 4, -1));
                int tokens = 0;
                while (!(generation.next(60_000) instanceof Generation.End)) {
                    tokens++;
                }
                float[] vector = lease.embed(shape, model.tokenize("What is " + marker + "?", true, true));
                System.out.println("probe: answered " + tokens + " tokens, embedded in " + vector.length);
            }
        } else {
            ModelParameters parameters = new ModelParameters().setModel(args[0]).setThreads(1).setCtxSize(512)
                    .enableEmbedding().setPoolingType(PoolingType.LAST);
            try (de.kherud.llama.LlamaModel embedder = new de.kherud.llama.LlamaModel(parameters)) {
                // the bindings' embedding call logs its input whole ("Calling embedding '...'")
                float[] vector = embedder.embed("What is " + marker + "?");
                System.out.println("probe: embedded in " + vector.length);
                Thread.sleep(500); // llama.cpp's common log writes from a thread of its own
            }
        }
        System.out.println("probe: done");
        System.exit(0);
    }
}
