package dev.fulcrum.inference;

import de.kherud.llama.InferenceParameters;
import de.kherud.llama.LlamaModel;
import de.kherud.llama.LlamaOutput;
import de.kherud.llama.ModelParameters;

/**
 * A JVM of its own for {@link GgufLogTest} (its stdout and stderr are llama.cpp's too): loads a GGUF file for chat and
 * for embeddings as {@link GgufBackend} does ({@code fulcrum}) or with the bindings' own log ({@code bindings}), then
 * chats and embeds a text holding the marker. Arguments: the file, the mode, the marker.
 */
final class GgufLogProbe {

    private GgufLogProbe() {
    }

    public static void main(String[] args) throws Exception {
        CatalogModel.Gguf settings = new CatalogModel.Gguf(args[0], 1, 512, 1);
        boolean fulcrum = "fulcrum".equals(args[1]);
        String marker = args[2];
        ModelParameters chatParameters = GgufBackend.parameters(settings, null, false, false);
        ModelParameters embedParameters = GgufBackend.parameters(settings, null, true, false);
        try (LlamaModel chat = fulcrum ? GgufBackend.open(chatParameters) : new LlamaModel(chatParameters);
                LlamaModel embedder = fulcrum ? GgufBackend.open(embedParameters) : new LlamaModel(embedParameters)) {
            String prompt = chat.applyTemplate(
                    "{\"messages\": [{\"role\": \"user\", \"content\": \"Tell me about " + marker + "\"}]}");
            StringBuilder answer = new StringBuilder();
            for (LlamaOutput output : chat.generate(new InferenceParameters(prompt).setNPredict(4))) {
                answer.append(output.text);
            }
            float[] vector = embedder.embed("What is " + marker + "?");
            System.out.println("probe: answered " + answer.length() + " characters, embedded in " + vector.length);
            Thread.sleep(500); // llama.cpp's common log writes from a thread of its own
        }
        System.out.println("probe: done");
        System.exit(0);
    }
}
