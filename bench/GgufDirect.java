import de.kherud.llama.InferenceParameters;
import de.kherud.llama.LlamaModel;
import de.kherud.llama.LlamaOutput;
import de.kherud.llama.ModelParameters;

/**
 * The same GGUF file generated with the bindings directly (no HTTP, no Fulcrum): the reference beside
 * bench/gguf.sh's figure through Fulcrum. Arguments: file, threads, requests, max tokens. Prints one line per request
 * ("pieces seconds") and the total in tokens per second (a piece is one streamed output: a token, or several whose
 * bytes complete a character).
 */
public class GgufDirect {
    public static void main(String[] args) {
        String file = args[0];
        int threads = Integer.parseInt(args[1]);
        int requests = Integer.parseInt(args[2]);
        int maxTokens = Integer.parseInt(args[3]);
        LlamaModel.setLogger(null, (level, message) -> {
        });
        LlamaModel model = new LlamaModel(new ModelParameters().setModel(file).setThreads(threads)
                .setThreadsBatch(threads).setCtxSize(4096).setParallel(1).enableJinja());
        String prompt = model.applyTemplate(
                "{\"messages\": [{\"role\": \"user\", \"content\": \"Tell me a long story about the sea.\"}]}");
        long pieces = 0;
        long start = System.nanoTime();
        for (int i = 0; i < requests; i++) {
            long t0 = System.nanoTime();
            int n = 0;
            for (LlamaOutput output : model.generate(new InferenceParameters(prompt).setNPredict(maxTokens)
                    .setTemperature(0f).setIgnoreEos(true).setCachePrompt(true))) {
                if (!output.text.isEmpty()) {
                    n++;
                }
            }
            pieces += n;
            System.out.printf("%d %.3f%n", n, (System.nanoTime() - t0) / 1e9);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long tokens = (long) requests * maxTokens; // the end token is ignored: every request generates max tokens
        System.out.printf("bindings directly: %d tokens (%d streamed pieces) in %.2f s = %.1f tokens/s%n", tokens,
                pieces, seconds, tokens / seconds);
        System.exit(0); // the bindings' native threads would keep the JVM alive
    }
}
