package dev.fulcrum.inference.engine.llama;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;

import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.EmbeddingBackend;
import dev.fulcrum.inference.EmbeddingExchange;
import dev.fulcrum.inference.EmbeddingRequest;
import dev.fulcrum.inference.Exchange.Outcome;
import dev.fulcrum.inference.FairExecutor;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.TextCompletionBackend;
import dev.fulcrum.inference.TextCompletionExchange;
import dev.fulcrum.inference.TextCompletionRequest;
import dev.fulcrum.inference.TokenSampler;
import dev.fulcrum.inference.catalog.CatalogModel;
import dev.fulcrum.inference.engine.ChatFields;
import dev.fulcrum.inference.engine.ChatPrompt;
import dev.fulcrum.inference.engine.LocalChatModel;
import dev.fulcrum.inference.engine.LocalChoices;
import dev.fulcrum.inference.engine.LocalTextCompletion;
import dev.fulcrum.inference.engine.embedding.LocalEmbeddingBackend;
import dev.fulcrum.inference.engine.format.ChatFormat;
import dev.fulcrum.inference.engine.format.ChatFormats;
import dev.fulcrum.inference.engine.template.ChatTemplate;
import dev.fulcrum.platform.errors.ApiException.Kind;

/**
 * A GGUF model served by llama.cpp inside Fulcrum, through the engine on llama.cpp's own C API ({@link LlamaEngine}):
 * the file is loaded once for every catalog entry and checkpoint that names it, a checkpoint being a LoRA adapter on it
 * ({@code loraPath}). The GGUF's own chat template ({@link ChatTemplate}) turns the messages and tools into the prompt.
 * <p>
 * Requests wait in the file's {@link FairExecutor} of {@code parallel} threads ({@link GgufQueues}: one for the base
 * model and all its checkpoints), shared fairly between projects (at most {@code max-queued-per-project} each, 429
 * beyond); each thread hands its choice to the engine, which decodes the running choices of the file together in one
 * batch per step, and reads the tokens back. A request goes back to its project's queue after each of its choices
 * ({@link LocalChoices}).
 */
public final class GgufBackend implements LocalChatModel, TextCompletionBackend, EmbeddingBackend, TokenSampler {

    /** A GGUF model honours every field of a chat request that the shared completion knows. */
    private static final ChatFields FIELDS = new ChatFields(true, true, true, true);

    private static final Logger LOG = Logger.getLogger(GgufBackend.class);
    /** The most choices (prompts times n) of one text completion request. */
    private static final int MAX_TEXT_CHOICES = 128;

    final String id;
    final CatalogModel.Gguf settings;
    /** A GGUF LoRA adapter applied to the model, or null. */
    final String loraPath;
    private final Integer maxTokens;
    private final FairExecutor workers;
    private final GgufQueues queues;
    private boolean closed;
    final LlamaEngine engine;
    final LlamaEngine.Shape shape;
    /** The chat template of the loaded file (the same file always gives the same template). */
    private volatile ChatTemplate template;
    /** The chat format the template teaches, detected once. */
    private volatile ChatFormat format;

    /**
     * @param loraPath
     *            a GGUF LoRA adapter applied to the model, or null
     * @param maxTokens
     *            the largest max_tokens a request may ask for, or null for a sequence's context
     */
    public GgufBackend(String id, CatalogModel.Gguf settings, String loraPath, Integer maxTokens,
            InferenceConfig.Builtin limits, LlamaEngine engine, GgufQueues queues) {
        this.id = id;
        this.settings = settings;
        this.loraPath = loraPath;
        this.shape = new LlamaEngine.Shape(settings.threads(), slotContext(settings), settings.parallel());
        this.maxTokens = maxTokens == null ? shape.slot() : maxTokens;
        this.engine = engine;
        this.queues = queues;
        this.workers = queues.take(settings, limits);
    }

    @Override
    public FairExecutor workers() {
        return workers;
    }

    @Override
    public ChatFields fields() {
        return FIELDS;
    }

    @Override
    public int maxTokens() {
        return maxTokens;
    }

    @Override
    public void check(ChatRequest request, ChatPrompt prompt, String modelId) {
        logitBias(request.body(), -1);
        reasoning(request);
        natives(() -> GgufGrammars.of(request, prompt, null));
    }

    /** The values of {@code reasoning_format}, as llama-server takes them. */
    private static final List<String> REASONING_FORMATS = List.of("none", "auto", "deepseek");

    /**
     * Whether a reasoning block goes to {@code reasoning_content}: the request's {@code reasoning_format} ({@code none}
     * keeps it in the content; {@code auto} and {@code deepseek} split it off), else the model's setting.
     */
    boolean reasoning(ChatRequest request) {
        JsonNode value = request.body().get("reasoning_format");
        if (value == null || value.isNull()) {
            return !"none".equals(settings.reasoningFormat());
        }
        if (!value.isTextual() || !REASONING_FORMATS.contains(value.asText())) {
            throw InferenceFailure.invalid("reasoning_format",
                    "'reasoning_format' must be one of " + String.join(", ", REASONING_FORMATS));
        }
        return !"none".equals(value.asText());
    }

    @Override
    public LocalChatModel.Prompt open(ChatRequest request, ChatPrompt prompt, String modelId) {
        return new GgufChatPrompt(this, request, prompt, modelId);
    }

    /**
     * {@code logit_bias}: token ids (as the object's keys) to biases from -100 to 100; with {@code vocabSize} at least
     * 0, ids must be below it. Empty when absent.
     */
    static Map<Integer, Float> logitBias(JsonNode body, int vocabSize) {
        JsonNode bias = body.get("logit_bias");
        Map<Integer, Float> out = new HashMap<>();
        if (bias == null || bias.isNull()) {
            return out;
        }
        if (!bias.isObject()) {
            throw InferenceFailure.invalid("logit_bias", "'logit_bias' must be an object of token ids to numbers");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = bias.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> entry = it.next();
            int token;
            try {
                token = Integer.parseInt(entry.getKey());
            } catch (NumberFormatException e) {
                throw InferenceFailure.invalid("logit_bias", "'logit_bias' keys must be token ids");
            }
            double value = entry.getValue().asDouble(Double.NaN);
            if (!entry.getValue().isNumber() || value < -100 || value > 100) {
                throw InferenceFailure.invalid("logit_bias", "'logit_bias' values must be numbers from -100 to 100");
            }
            if (token < 0 || vocabSize >= 0 && token >= vocabSize) {
                throw InferenceFailure.invalid("logit_bias",
                        "Token " + token + " of 'logit_bias' is not in the model's vocabulary");
            }
            // OpenAI's -100 bans a token and 100 forces it
            out.put(token, value <= -100 ? Float.NEGATIVE_INFINITY : (float) value);
        }
        return out;
    }

    /**
     * The sampling of one choice ({@code seed + choice}, as OpenAI's {@code n} choices need different draws), with the
     * request's penalties and logit biases.
     */
    static Sampling sampling(Double temperature, Double topP, Long seed, int choice, JsonNode body, int vocabSize) {
        return Sampling.of(temperature, topP, seed == null ? null : seed + choice)
                .withPenalties(body.path("presence_penalty").asDouble(0), body.path("frequency_penalty").asDouble(0))
                .withLogitBias(logitBias(body, vocabSize));
    }

    /** The file's chat template, read once. */
    ChatTemplate template(LlamaModel model) {
        ChatTemplate loaded = template;
        if (loaded == null) {
            String source = model.chatTemplate();
            if (source == null) {
                throw new InferenceFailure(Kind.INVALID,
                        "The model '" + id + "' has no chat template: use /v1/completions", "model", "invalid_value",
                        null);
            }
            try {
                loaded = ChatTemplate.of(source, model.tokenText(model.bos()), model.tokenText(model.eos()));
            } catch (IllegalArgumentException e) {
                throw new InferenceFailure(Kind.UNAVAILABLE,
                        "The chat template of the model '" + id + "' cannot be used: " + e.getMessage(), null,
                        "model_unavailable", null);
            }
            template = loaded;
        }
        return loaded;
    }

    /** The chat format the file's template teaches ({@link ChatFormats#detect}), read once. */
    ChatFormat format(LlamaModel model) {
        ChatFormat detected = format;
        if (detected == null) {
            ChatTemplate chatTemplate = template(model);
            detected = ChatFormats.detect(model.chatTemplate(), rendering -> chatTemplate.render(rendering.messages(),
                    rendering.tools(), true, rendering.variables()));
            format = detected;
        }
        return detected;
    }

    /**
     * The tokens of a rendered chat prompt as llama-server makes them: the vocabulary's start token when it asks for
     * one (not twice when the template wrote it), special tokens in the text read as such.
     */
    static int[] promptTokens(LlamaModel model, String prompt) {
        String bos = model.addsBos() ? model.tokenText(model.bos()) : null;
        String text = bos != null && !bos.isEmpty() && prompt.startsWith(bos) ? prompt.substring(bos.length()) : prompt;
        return model.tokenize(text, true, true);
    }

    /** Token-level sampling (the Tinker API's), with this backend's adapter. */
    @Override
    public Sampled sampleTokens(Asked asked) {
        return GgufTokenSampling.sample(this, asked);
    }

    /** The model held loaded for one request; a file that cannot be read or loaded is 503 {@code model_unavailable}. */
    LlamaEngine.Lease lease() {
        if (!Files.isReadable(Path.of(settings.path()))) {
            throw new InferenceFailure(Kind.UNAVAILABLE, "The model file of '" + id + "' cannot be read", null,
                    "model_unavailable", null);
        }
        return natives(() -> {
            try {
                return engine.lease(settings.path());
            } catch (IllegalStateException e) {
                throw new InferenceFailure(Kind.UNAVAILABLE,
                        "The model '" + id + "' could not be loaded: " + e.getMessage(), null, "model_unavailable",
                        null);
            } catch (LlamaEngine.Busy e) {
                throw new InferenceFailure(Kind.UNAVAILABLE, e.getMessage(), null, "model_unavailable", 1);
            }
        });
    }

    /** Runs {@code work}; llama.cpp's library not being usable on this server is 503 with the reason. */
    static <T> T natives(java.util.function.Supplier<T> work) {
        try {
            return work.get();
        } catch (LlamaNatives.Unavailable e) {
            throw new InferenceFailure(Kind.UNAVAILABLE, e.getMessage(), null, "model_unavailable", null);
        }
    }

    /** The tokens one request may hold: the context is split between the {@code parallel} sequences. */
    private static int slotContext(CatalogModel.Gguf settings) {
        return Math.max(1, settings.contextSize() / settings.parallel());
    }

    /**
     * How many tokens a choice may generate after {@code promptTokens}: the request's limit, at most what is left of a
     * sequence's context; a prompt that leaves no room is 400 {@code context_length_exceeded}.
     */
    int limit(Integer asked, int promptTokens, String param) {
        int room = shape.slot() - promptTokens;
        if (room < 1) {
            throw new InferenceFailure(Kind.INVALID,
                    "The prompt has " + promptTokens + " tokens; the model '" + id + "' takes at most "
                            + (shape.slot() - 1) + " (its context is " + shape.slot() + " tokens a request)",
                    param, "context_length_exceeded", null);
        }
        return asked == null ? room : Math.min(asked, room);
    }

    @Override
    public void check(TextCompletionRequest request, String modelId) {
        LocalTextCompletion.check(request, FIELDS, true, maxTokens, modelId, true);
        if ((long) request.promptCount() * request.n() > MAX_TEXT_CHOICES) {
            throw InferenceFailure.invalid(request.promptCount() > MAX_TEXT_CHOICES ? "prompt" : "n", "The model '"
                    + modelId + "' answers at most " + MAX_TEXT_CHOICES + " choices (prompts times n) per request");
        }
        logitBias(request.body(), -1);
    }

    /**
     * The prompts continued as written (no chat template; the vocabulary's start token added when it asks for one), one
     * choice per turn ({@link LocalTextCompletion}).
     */
    @Override
    public void complete(TextCompletionExchange exchange) {
        new GgufTextCompletion(this, exchange).queueOn(workers);
    }

    @Override
    public void check(EmbeddingRequest request, String modelId) {
        // token ids are the model's own: their range is checked once the model is loaded
    }

    /**
     * Refuses, before anything is generated, token ids that are not the model's (outside its vocabulary): they are
     * taken as the model's own ids, as vLLM and llama-server take them.
     */
    static void checkTokens(List<int[]> arrays, LlamaModel model, String param, String modelId) {
        for (int[] tokens : arrays) {
            for (int token : tokens) {
                if (token < 0 || token >= model.vocabSize()) {
                    throw InferenceFailure.invalid(param,
                            "'" + param + "' holds " + (token < 0 ? "a token id" : "the token id " + token)
                                    + " outside the vocabulary of the model '" + modelId + "' (ids 0 to "
                                    + (model.vocabSize() - 1) + ")");
                }
            }
        }
    }

    @Override
    public void embed(EmbeddingExchange exchange) {
        new EmbeddingInputs(exchange).queueOn(workers);
    }

    /**
     * One vector per input, one input per turn ({@link LocalChoices}). An input longer than a sequence's context is a
     * 400; {@code dimensions} must be the model's own.
     */
    private final class EmbeddingInputs extends LocalChoices {

        private final EmbeddingExchange exchange;
        private final EmbeddingRequest request;
        private final String modelId;
        private final List<float[]> vectors;
        private LlamaEngine.Lease lease;
        private int tokens;

        EmbeddingInputs(EmbeddingExchange exchange) {
            super(exchange, exchange.request().inputCount());
            this.exchange = exchange;
            this.request = exchange.request();
            this.modelId = exchange.model().id();
            this.vectors = new java.util.ArrayList<>(request.inputCount());
        }

        @Override
        protected void start() {
            lease = hold(lease());
            if (request.tokenInputs() != null) {
                checkTokens(request.tokenInputs(), lease.model(), "input", modelId);
            }
        }

        @Override
        protected void generate(int index) {
            int[] input = request.tokenInputs() != null ? request.tokenInputs().get(index)
                    : lease.model().tokenize(request.texts().get(index), true, true);
            if (input.length == 0) {
                input = new int[] { lease.model().bos() };
            }
            if (input.length > shape.slot()) {
                throw InferenceFailure.invalid("input", "Input " + index + " has " + input.length
                        + " tokens; the model '" + modelId + "' embeds at most " + shape.slot());
            }
            tokens += input.length;
            float[] vector = lease.embed(shape, input);
            if (request.dimensions() != null && request.dimensions() != vector.length) {
                throw InferenceFailure.invalid("dimensions", "This model does not support specifying dimensions.");
            }
            vectors.add(vector);
        }

        @Override
        protected void end() {
            if (exchange.cancelled()) {
                return;
            }
            int counted = tokens;
            var answer = LocalEmbeddingBackend.list(vectors, request.base64(), modelId, counted);
            context().runOnContext(v -> {
                exchange.json(200, answer);
                exchange.finish(new Outcome(200, counted, 0));
            });
        }

        @Override
        protected InferenceFailure failed(Throwable e) {
            return GgufBackend.this.failed(modelId, e);
        }
    }

    /** A generation that failed inside: logged, and a 500 naming the model (not what failed inside it). */
    @Override
    public InferenceFailure failed(String modelId, Throwable e) {
        LOG.errorf(e, "GGUF model %s failed", modelId);
        return new InferenceFailure(Kind.FAILED, "The model '" + modelId + "' failed", null, null, null);
    }

    /**
     * Lets go of the file's queue (the last backend of the file stops its threads); the engine frees the model once no
     * catalog entry or checkpoint has used it for its idle time.
     */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            queues.release(workers);
        }
    }
}
