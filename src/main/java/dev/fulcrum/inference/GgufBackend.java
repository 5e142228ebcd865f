package dev.fulcrum.inference;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.ChatExchange.Outcome;

import de.kherud.llama.InferenceParameters;
import de.kherud.llama.LlamaIterator;
import de.kherud.llama.LlamaModel;
import de.kherud.llama.LlamaOutput;
import de.kherud.llama.LogLevel;
import de.kherud.llama.ModelParameters;
import de.kherud.llama.args.LogFormat;
import de.kherud.llama.args.PoolingType;

/**
 * A GGUF chat model served by llama.cpp inside Fulcrum (the {@code de.kherud:llama} JNI bindings, llama.cpp's server
 * loop in-process). The model is loaded on its first request, with its LoRA adapter when it has one; its chat template
 * (rendered by llama.cpp's Jinja engine) turns the messages and tools into the prompt.
 * <p>
 * The bindings end the whole process on some native errors (an exception thrown in their JNI code is not caught), so no
 * request field reaches them unchecked: messages and tools are rebuilt here in the one shape llama.cpp's parser
 * accepts, JSON schemas are limited to the keywords its grammar converter handles, and {@code logprobs} is refused (the
 * bindings' reader of token probabilities expects a field llama.cpp no longer writes and aborts).
 * <p>
 * Generation runs on {@code parallel} threads of a {@link FairExecutor} (llama.cpp batches their slots), shared fairly
 * between projects; a request waits in its project's queue of at most {@code max-queued-per-project} (429 beyond), and
 * goes back to it after each of its choices ({@link LocalChoices}).
 */
public final class GgufBackend implements Backend, TextCompletionBackend, EmbeddingBackend {

    private static final Logger LOG = Logger.getLogger(GgufBackend.class);
    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool");
    /** JSON Schema keywords llama.cpp's converter turns into grammar without surprises; others are refused. */
    private static final Set<String> SCHEMA_KEYWORDS = Set.of("type", "properties", "required", "items", "enum",
            "const", "additionalProperties", "description", "title", "minItems", "maxItems", "minimum", "maximum",
            "minLength", "maxLength", "anyOf", "oneOf", "default", "examples");
    private static final Set<String> SCHEMA_TYPES = Set.of("object", "array", "string", "number", "integer", "boolean",
            "null");
    private static final int MAX_SCHEMA_DEPTH = 16;
    /** The most choices (prompts times n) of one text completion request. */
    private static final int MAX_TEXT_CHOICES = 128;
    /** A tool call in the markup of Hermes-style chat templates (Qwen 2.5, Hermes, the tiny test model). */
    private static final Pattern TOOL_CALL = Pattern.compile("<tool_call>(.*?)</tool_call>", Pattern.DOTALL);

    /**
     * How long an embedding call may go unanswered before the task loop is woken ({@link #embed}): far above the
     * milliseconds a short input takes, and a nudge costs a short embedding should a long input still be running.
     */
    static final long NUDGE_AFTER_MS = 250;
    private static final ScheduledExecutorService NUDGE_TIMER = Executors.newSingleThreadScheduledExecutor(task -> {
        Thread thread = new Thread(task, "gguf-embedding-nudges");
        thread.setDaemon(true);
        return thread;
    });
    /** The nudges' own calls, each on a thread of its own: one that is not answered either is woken by the next. */
    private static final ExecutorService NUDGES = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "gguf-embedding-nudge");
        thread.setDaemon(true);
        return thread;
    });

    private final String id;
    private final CatalogModel.Gguf settings;
    private final String loraPath;
    private final Integer maxTokens;
    private final FairExecutor workers;
    private final Loaded model = new Loaded(false);
    /**
     * The same file loaded a second time with embeddings enabled, on the first embeddings request. llama.cpp computes
     * either embeddings or next-token logits with one context (the server refuses completions when started with
     * embeddings, and the bindings do not check), so embeddings get their own instance of the file: a model used for
     * both takes its memory twice.
     */
    private final Loaded embedder = new Loaded(true);
    /** The texts of the model's end-of-generation tokens (printed, as llama.cpp prints special tokens here). */
    private volatile Set<String> endTokens = Set.of();

    /**
     * @param loraPath
     *            a GGUF LoRA adapter applied to the model, or null
     * @param maxTokens
     *            the largest max_tokens a request may ask for, or null for the context's size
     */
    public GgufBackend(String id, CatalogModel.Gguf settings, String loraPath, Integer maxTokens,
            InferenceConfig.Builtin queues) {
        this.id = id;
        this.settings = settings;
        this.loraPath = loraPath;
        this.maxTokens = maxTokens == null ? settings.contextSize() : maxTokens;
        this.workers = new FairExecutor("gguf-" + id.replaceAll("[^A-Za-z0-9._-]", "_"), settings.parallel(),
                queues.maxQueuedPerProject(), queues.maxQueued());
    }

    /** The generation threads (tests hold them to observe the order of turns). */
    FairExecutor workers() {
        return workers;
    }

    @Override
    public String type() {
        return "llm";
    }

    @Override
    public void check(ChatRequest request, String modelId) {
        Integer asked = request.maxTokens();
        if (asked != null && asked > maxTokens) {
            throw InferenceFailure.maxTokensTooLarge(request.maxTokensParam(), asked, maxTokens, modelId);
        }
        for (String field : List.of("logprobs", "top_logprobs", "logit_bias")) {
            JsonNode value = request.body().get(field);
            boolean set = value != null && !value.isNull() && !(value.isBoolean() && !value.asBoolean())
                    && !(value.isContainerNode() && value.isEmpty());
            if (set) {
                throw InferenceFailure.unsupported(field, modelId);
            }
        }
        messages(request, modelId);
        tools(request);
        grammar(request, modelId);
    }

    /** The messages as llama.cpp's parser accepts them: a role, string content, tool calls with string arguments. */
    private static JsonArray messages(ChatRequest request, String modelId) {
        JsonArray messages = new JsonArray();
        for (int i = 0; i < request.messages().size(); i++) {
            JsonNode message = request.messages().get(i);
            String at = "messages[" + i + "]";
            String role = message.path("role").asText();
            if (!ROLES.contains(role)) {
                throw InferenceFailure.unsupported(at + ".role", modelId);
            }
            JsonObject out = new JsonObject().put("role", "developer".equals(role) ? "system" : role).put("content",
                    text(message.get("content"), at + ".content", modelId));
            JsonNode calls = message.get("tool_calls");
            if (calls != null && !calls.isNull() && "assistant".equals(role)) {
                if (!calls.isArray()) {
                    throw InferenceFailure.invalid(at + ".tool_calls", "'" + at + ".tool_calls' must be an array");
                }
                JsonArray toolCalls = new JsonArray();
                for (JsonNode call : calls) {
                    JsonNode function = call.path("function");
                    if (!function.path("name").isTextual()) {
                        throw InferenceFailure.invalid(at + ".tool_calls",
                                "Each tool call needs 'function.name' as a string");
                    }
                    JsonNode arguments = function.get("arguments");
                    toolCalls.add(new JsonObject().put("id", call.path("id").asText("call")).put("type", "function")
                            .put("function", new JsonObject().put("name", function.path("name").asText())
                                    .put("arguments", arguments == null || arguments.isNull() ? "{}"
                                            : arguments.isTextual() ? arguments.asText() : arguments.toString())));
                }
                out.put("tool_calls", toolCalls);
            }
            if ("tool".equals(role) && message.path("tool_call_id").isTextual()) {
                out.put("tool_call_id", message.path("tool_call_id").asText());
            }
            messages.add(out);
        }
        return messages;
    }

    private static String text(JsonNode content, String param, String modelId) {
        if (content == null || content.isNull()) {
            return "";
        }
        if (content.isTextual()) {
            return content.asText();
        }
        StringBuilder text = new StringBuilder();
        for (JsonNode part : content) {
            if (!"text".equals(part.path("type").asText()) || !part.path("text").isTextual()) {
                throw InferenceFailure.unsupported(param, modelId);
            }
            text.append(part.path("text").asText());
        }
        return text.toString();
    }

    /** The request's tools as llama.cpp's parser accepts them (name, description, parameters), or null. */
    private static JsonArray tools(ChatRequest request) {
        JsonNode tools = request.body().get("tools");
        if (tools == null || tools.isNull() || tools.isEmpty()) {
            return null;
        }
        JsonArray out = new JsonArray();
        for (int i = 0; i < tools.size(); i++) {
            JsonNode function = tools.get(i).path("function");
            String at = "tools[" + i + "]";
            if (!"function".equals(tools.get(i).path("type").asText()) || !function.path("name").isTextual()) {
                throw InferenceFailure.invalid(at,
                        "'" + at + "' must be {\"type\": \"function\", \"function\": " + "{\"name\": ...}}");
            }
            JsonNode parameters = function.get("parameters");
            if (parameters != null && !parameters.isNull() && !parameters.isObject()) {
                throw InferenceFailure.invalid(at + ".function.parameters",
                        "'parameters' must be a JSON Schema object");
            }
            out.add(new JsonObject().put("type", "function").put("function",
                    new JsonObject().put("name", function.path("name").asText())
                            .put("description", function.path("description").asText("")).put("parameters",
                                    parameters == null || parameters.isNull() ? new JsonObject().put("type", "object")
                                            : new JsonObject(parameters.toString()))));
        }
        return out;
    }

    /**
     * The grammar the answer is constrained by: a forced tool call ({@code tool_choice} {@code required} or a named
     * function: an object of the tool's name and its arguments' schema), a JSON object or a JSON schema
     * ({@code response_format}); null for free text. With {@code tool_choice} {@code auto} the answer is free (the
     * tools reach the model through its chat template) and {@link #toolCalls} reads the calls out of it.
     */
    private static String grammar(ChatRequest request, String modelId) {
        JsonArray tools = tools(request);
        JsonNode choice = request.body().get("tool_choice");
        String mode = choice == null || choice.isNull() ? (tools == null ? "none" : "auto")
                : choice.isTextual() ? choice.asText() : "function";
        switch (mode) {
            case "none":
                break;
            case "auto":
                if (tools == null) {
                    throw InferenceFailure.invalid("tool_choice", "'tool_choice' requires 'tools'");
                }
                break;
            case "required":
            case "function":
                if (tools == null) {
                    throw InferenceFailure.invalid("tool_choice", "'tool_choice' requires 'tools'");
                }
                String name = "function".equals(mode) ? choice.path("function").path("name").asText(null) : null;
                if ("function".equals(mode) && (!"function".equals(choice.path("type").asText()) || name == null)) {
                    throw InferenceFailure.invalid("tool_choice",
                            "'tool_choice' must be 'none', 'required' or {\"type\": \"function\", \"function\": "
                                    + "{\"name\": ...}}");
                }
                JsonArray calls = new JsonArray();
                for (Object tool : tools) {
                    JsonObject function = ((JsonObject) tool).getJsonObject("function");
                    if (name == null || name.equals(function.getString("name"))) {
                        checkSchema(function.getJsonObject("parameters"), "tools.function.parameters", 0);
                        calls.add(new JsonObject()
                                .put("type",
                                        "object")
                                .put("properties",
                                        new JsonObject()
                                                .put("name", new JsonObject().put("const", function.getString("name")))
                                                .put("arguments", function.getJsonObject("parameters")))
                                .put("required", new JsonArray().add("name").add("arguments"))
                                .put("additionalProperties", false));
                    }
                }
                if (calls.isEmpty()) {
                    throw InferenceFailure.invalid("tool_choice", "No tool is named '" + name + "'");
                }
                if (request.has("response_format")
                        && !"text".equals(request.body().path("response_format").path("type").asText())) {
                    throw InferenceFailure.invalid("response_format",
                            "'response_format' cannot be combined with a forced tool call");
                }
                return toGrammar(calls.size() == 1 ? calls.getJsonObject(0) : new JsonObject().put("anyOf", calls),
                        "tools");
            default:
                throw InferenceFailure.invalid("tool_choice", "'tool_choice' must be 'none', 'auto', 'required' or "
                        + "{\"type\": \"function\", \"function\": {\"name\": ...}}");
        }
        JsonNode format = request.body().get("response_format");
        String type = format == null || format.isNull() ? "text" : format.path("type").asText();
        switch (type) {
            case "text":
                return null;
            case "json_object":
                return toGrammar(new JsonObject().put("type", "object"), "response_format");
            case "json_schema":
                JsonNode schema = format.path("json_schema").get("schema");
                if (schema == null || !schema.isObject()) {
                    throw InferenceFailure.invalid("response_format.json_schema.schema",
                            "'response_format.json_schema.schema' must be a JSON Schema object");
                }
                JsonObject parsed = new JsonObject(schema.toString());
                checkSchema(parsed, "response_format.json_schema.schema", 0);
                return toGrammar(parsed, "response_format");
            default:
                throw InferenceFailure.invalid("response_format",
                        "'response_format.type' must be 'text', 'json_object' or 'json_schema'");
        }
    }

    private static String toGrammar(JsonObject schema, String param) {
        try {
            return LlamaModel.jsonSchemaToGrammar(schema.encode());
        } catch (RuntimeException e) {
            throw InferenceFailure.invalid(param, "The JSON schema cannot be turned into a grammar: " + e.getMessage());
        }
    }

    /** Refuses, before llama.cpp sees it, a schema with keywords or types its converter does not handle. */
    private static void checkSchema(Object node, String param, int depth) {
        if (depth > MAX_SCHEMA_DEPTH) {
            throw InferenceFailure.invalid(param, "The JSON schema nests more than " + MAX_SCHEMA_DEPTH + " deep");
        }
        if (node instanceof Boolean) {
            return;
        }
        if (!(node instanceof JsonObject schema)) {
            throw InferenceFailure.invalid(param, "A JSON schema must be an object");
        }
        for (String key : schema.fieldNames()) {
            if (!SCHEMA_KEYWORDS.contains(key)) {
                throw InferenceFailure.invalid(param, "The JSON schema keyword '" + key + "' is not supported here; "
                        + "supported: " + String.join(", ", SCHEMA_KEYWORDS.stream().sorted().toList()));
            }
        }
        Object type = schema.getValue("type");
        List<Object> types = type instanceof JsonArray array ? array.getList()
                : type == null ? List.of() : List.of(type);
        for (Object t : types) {
            if (!(t instanceof String name) || !SCHEMA_TYPES.contains(name)) {
                throw InferenceFailure.invalid(param, "Unknown JSON schema type: " + t);
            }
        }
        for (String key : List.of("minItems", "maxItems", "minLength", "maxLength")) {
            Object value = schema.getValue(key);
            if (value != null && !(value instanceof Integer || value instanceof Long)) {
                throw InferenceFailure.invalid(param, "'" + key + "' must be an integer");
            }
        }
        if (schema.getValue("properties") instanceof JsonObject properties) {
            for (String key : properties.fieldNames()) {
                checkSchema(properties.getValue(key), param, depth + 1);
            }
        } else if (schema.containsKey("properties")) {
            throw InferenceFailure.invalid(param, "'properties' must be an object");
        }
        if (schema.containsKey("required") && !(schema.getValue("required") instanceof JsonArray required
                && required.stream().allMatch(String.class::isInstance))) {
            throw InferenceFailure.invalid(param, "'required' must be an array of strings");
        }
        if (schema.containsKey("enum") && !(schema.getValue("enum") instanceof JsonArray)) {
            throw InferenceFailure.invalid(param, "'enum' must be an array");
        }
        if (schema.containsKey("items")) {
            checkSchema(schema.getValue("items"), param, depth + 1);
        }
        if (schema.containsKey("additionalProperties")) {
            checkSchema(schema.getValue("additionalProperties"), param, depth + 1);
        }
        for (String key : List.of("anyOf", "oneOf")) {
            if (schema.containsKey(key)) {
                if (!(schema.getValue(key) instanceof JsonArray options)) {
                    throw InferenceFailure.invalid(param, "'" + key + "' must be an array");
                }
                for (Object option : options) {
                    checkSchema(option, param, depth + 1);
                }
            }
        }
    }

    @Override
    public void complete(ChatExchange exchange) {
        new ChatChoices(exchange).queueOn(workers);
    }

    /** A llama.cpp instance of the file (with its adapter), loaded on first use. */
    private final class Loaded {

        private final boolean embeddings;
        private volatile LlamaModel loaded;

        Loaded(boolean embeddings) {
            this.embeddings = embeddings;
        }

        LlamaModel get() {
            LlamaModel model = loaded;
            if (model != null) {
                return model;
            }
            synchronized (this) {
                if (loaded == null) {
                    loaded = load(embeddings);
                }
                return loaded;
            }
        }

        /**
         * Stops llama.cpp's task loop of a loaded instance (which does not free it, see {@link GgufBackend#close()}).
         */
        void close() {
            LlamaModel model = loaded;
            if (model != null) {
                model.close();
            }
        }
    }

    private LlamaModel load(boolean embeddings) {
        if (!Files.isReadable(Path.of(settings.path()))) {
            throw new InferenceFailure(503, "The model file of '" + id + "' cannot be read", null, "model_unavailable",
                    null);
        }
        boolean pooled;
        try {
            endTokens = GgufTokens.endTokens(Path.of(settings.path()));
            pooled = GgufTokens.declaresPooling(Path.of(settings.path()));
        } catch (java.io.IOException e) {
            throw new InferenceFailure(503, "The model '" + id + "' could not be loaded: " + e.getMessage(), null,
                    "model_unavailable", null);
        }
        ModelParameters parameters = parameters(settings, loraPath, embeddings, pooled);
        long start = System.nanoTime();
        LlamaModel loaded;
        try {
            loaded = open(parameters);
        } catch (LinkageError e) {
            LOG.errorf(e, "llama.cpp's native library could not be loaded");
            throw new InferenceFailure(503, "The model '" + id + "' could not be loaded: llama.cpp's native "
                    + "library is not available on this server", null, "model_unavailable", null);
        } catch (RuntimeException e) { // the bindings' LlamaException is not public
            throw new InferenceFailure(503, "The model '" + id + "' could not be loaded: " + e.getMessage(), null,
                    "model_unavailable", null);
        }
        LOG.infof("Loaded GGUF model %s from %s%s%s in %d ms", id, settings.path(),
                loraPath == null ? "" : " with adapter " + loraPath, embeddings ? " for embeddings" : "",
                (System.nanoTime() - start) / 1_000_000);
        return loaded;
    }

    /** How llama.cpp is started for the file: chat, or embeddings ({@code pooled}: the file declares its pooling). */
    static ModelParameters parameters(CatalogModel.Gguf settings, String loraPath, boolean embeddings, boolean pooled) {
        // special tokens printed: an answer that ends in an end token ended by the model's choice, not by the token
        // limit (the bindings do not say why a generation stopped)
        ModelParameters parameters = new ModelParameters().setModel(settings.path()).setThreads(settings.threads())
                .setThreadsBatch(settings.threads()).setCtxSize(settings.contextSize()).setParallel(settings.parallel())
                .enableJinja().enableSpecial();
        if (embeddings) {
            // a whole input in one batch (llama.cpp refuses embedding inputs longer than the physical batch); without
            // a pooling llama.cpp reads from the file, it gives one vector per token, of which the bindings return the
            // first: such models get the last token's state, which has seen the whole input (mean pooling of a causal
            // model trips an assertion of this llama.cpp while the context is built, which ends the process)
            int slot = slotContext(settings);
            parameters.enableEmbedding().setBatchSize(slot).setUbatchSize(slot);
            if (!pooled) {
                parameters.setPoolingType(PoolingType.LAST);
            }
        }
        if (loraPath != null) {
            parameters.addLoraAdapter(loraPath);
        }
        return parameters;
    }

    /**
     * Loads llama.cpp with its log kept from request text. Its server code logs through llama.cpp's common log at INFO,
     * with no level that keeps warnings but not INFO and no callback: that log goes to the process's stderr and prints
     * each embedding input whole ({@code "Calling embedding '...'"} in the bindings' JNI), so it is turned off
     * ({@code --log-disable}; it is one log for the process, and stays off). llama.cpp's library log (the model, the
     * context, decoding) then goes to {@link #llamaLog}, which keeps its warnings and errors: set after each load,
     * because loading points it at the common log again. Loads are one at a time in the process: the bindings' setter
     * frees the callback it had before setting the new one, which is safe only while no model logs through it, that is
     * right after a load, before another load's end could set it.
     */
    static LlamaModel open(ModelParameters parameters) {
        synchronized (LOADING) {
            LlamaModel loaded = new LlamaModel(parameters.disableLog());
            LlamaModel.setLogger(LogFormat.TEXT, GgufBackend::llamaLog);
            return loaded;
        }
    }

    /** Held while llama.cpp loads a model and its log callback is set (see {@link #open}). */
    private static final Object LOADING = new Object();

    /** The longest line of llama.cpp's library log written to Fulcrum's log. */
    private static final int MAX_LOG_LINE = 300;

    /**
     * A line of llama.cpp's library log: warnings and errors go to Fulcrum's log (cut to {@value #MAX_LOG_LINE}
     * characters: a grammar it refuses is quoted whole), INFO and DEBUG (tensor by tensor, batch by batch) do not.
     */
    static void llamaLog(LogLevel level, String text) {
        if (level != LogLevel.WARN && level != LogLevel.ERROR || text == null || text.isBlank()) {
            return;
        }
        String line = text.strip();
        if (line.length() > MAX_LOG_LINE) {
            line = line.substring(0, MAX_LOG_LINE) + "...";
        }
        if (level == LogLevel.ERROR) {
            LOG.errorf("llama.cpp: %s", line);
        } else {
            LOG.warnf("llama.cpp: %s", line);
        }
    }

    /** The tokens one request may hold: llama.cpp splits the context between its {@code parallel} slots. */
    private int slotContext() {
        return slotContext(settings);
    }

    private static int slotContext(CatalogModel.Gguf settings) {
        return Math.max(1, settings.contextSize() / settings.parallel());
    }

    record Answer(String text, JsonArray toolCalls, String finishReason, int completionTokens) {
    }

    /**
     * A chat completion's {@code n} choices, one per turn ({@link LocalChoices}): the prompt is the template's,
     * rendered once; choice {@code i} samples with seed {@code seed + i}.
     */
    private final class ChatChoices extends LocalChoices {

        private final ChatExchange exchange;
        private final ChatRequest request;
        private final String modelId;
        private final String completionId = "chatcmpl-" + UUID.randomUUID().toString().replace("-", "");
        private final long created = System.currentTimeMillis() / 1000;
        private final JsonArray choices = new JsonArray();
        private LlamaModel llama;
        private String prompt;
        private String grammar;
        /** A forced call: the answer is the call's JSON under the grammar. */
        private boolean toolCall;
        /** The tools with tool_choice auto on a free answer, or null. */
        private JsonArray autoTools;
        private int promptTokens;
        private int completionTokens;

        ChatChoices(ChatExchange exchange) {
            super(exchange, exchange.request().n());
            this.exchange = exchange;
            this.request = exchange.request();
            this.modelId = exchange.model().id();
        }

        @Override
        void start() {
            llama = model.get();
            JsonObject chat = new JsonObject().put("messages", messages(request, modelId));
            JsonArray tools = tools(request);
            if (tools != null) {
                chat.put("tools", tools);
            }
            prompt = llama.applyTemplate(chat.encode());
            grammar = grammar(request, modelId);
            JsonNode choiceParam = request.body().get("tool_choice");
            toolCall = tools != null && choiceParam != null
                    && (choiceParam.isObject() || "required".equals(choiceParam.asText()));
            // tool_choice auto (said or implied by tools) on a free answer: the calls are read out of the text at the
            // end, so a stream gets the answer then
            boolean auto = tools != null && grammar == null
                    && (choiceParam == null || choiceParam.isNull() || "auto".equals(choiceParam.asText()));
            autoTools = auto ? tools : null;
            promptTokens = llama.encode(prompt).length;
            if (request.stream()) {
                context().runOnContext(v -> exchange.startStream());
            }
        }

        @Override
        void generate(int index) {
            if (request.stream()) {
                emit(chunk(completionId, created, modelId, index,
                        new JsonObject().put("role", "assistant").put("content", toolCall ? null : ""), null));
            }
            Answer answer = answer(index);
            completionTokens += answer.completionTokens();
            if (request.stream()) {
                if (autoTools != null && answer.text() != null && !answer.text().isEmpty()) {
                    emit(chunk(completionId, created, modelId, index, new JsonObject().put("content", answer.text()),
                            null));
                }
                if (answer.toolCalls() != null) {
                    JsonArray deltas = new JsonArray();
                    for (int i = 0; i < answer.toolCalls().size(); i++) {
                        deltas.add(answer.toolCalls().getJsonObject(i).copy().put("index", i));
                    }
                    emit(chunk(completionId, created, modelId, index, new JsonObject().put("tool_calls", deltas),
                            null));
                }
                emit(chunk(completionId, created, modelId, index, new JsonObject(), answer.finishReason()));
            } else {
                JsonObject message = new JsonObject().put("role", "assistant").put("content", answer.text());
                if (answer.toolCalls() != null) {
                    message.put("tool_calls", answer.toolCalls());
                }
                choices.add(new JsonObject().put("index", index).put("message", message).putNull("logprobs")
                        .put("finish_reason", answer.finishReason()));
            }
        }

        /**
         * Generates one choice; streamed text goes out piece by piece as llama.cpp produces it (a tool call's JSON is
         * sent whole at the end, and so is an answer that may hold calls, {@code autoTools} not null).
         */
        private Answer answer(int choice) {
            Integer limit = request.maxTokens();
            InferenceParameters parameters = sampling(prompt, limit, request.temperature(), request.topP(),
                    request.body(), request.seed(), choice, request.stop());
            if (grammar != null) {
                parameters.setGrammar(grammar);
            }
            boolean streamPieces = request.stream() && !toolCall && autoTools == null;
            Generated generated = run(llama, parameters, limit, request.stop(), exchange, streamPieces
                    ? piece -> emit(
                            chunk(completionId, created, modelId, choice, new JsonObject().put("content", piece), null))
                    : null);
            String text = generated.text();
            if (toolCall) {
                JsonObject call;
                try {
                    call = new JsonObject(text);
                } catch (DecodeException e) {
                    return new Answer(text, null, generated.finishReason(), generated.tokens());
                }
                JsonObject arguments = call.getJsonObject("arguments", new JsonObject());
                JsonArray calls = new JsonArray().add(toolCall(call.getString("name"), arguments));
                return new Answer(null, calls, "tool_calls", generated.tokens());
            }
            if (autoTools != null && "stop".equals(generated.finishReason())) {
                Answer calls = toolCalls(text, autoTools, generated.tokens());
                if (calls != null) {
                    return calls;
                }
            }
            return new Answer(text, null, generated.finishReason(), generated.tokens());
        }

        @Override
        void end() {
            exchange.endGenerated(context(), completionId, created, choices, promptTokens, completionTokens);
        }

        @Override
        InferenceFailure failed(Throwable e) {
            return GgufBackend.failed(modelId, e);
        }
    }

    private static JsonObject toolCall(String name, JsonObject arguments) {
        return new JsonObject().put("id", "call_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24))
                .put("type", "function")
                .put("function", new JsonObject().put("name", name).put("arguments", arguments.encode()));
    }

    /**
     * The tool calls of a free answer ({@code tool_choice} auto), in the markup chat templates teach models:
     * Hermes-style {@code <tool_call>{"name": ..., "arguments": {...}}</tool_call>} blocks (Qwen 2.5, Hermes, the tiny
     * test model), the text around them being the message's content; or an answer that is only such an object (Llama
     * 3.x's JSON calls, {@code "parameters"} standing for {@code "arguments"}). A call must name one of the tools and
     * carry an object of arguments (or a string holding one) that matches the tool's parameters schema
     * ({@link SchemaMatch}: no grammar constrained them); if any block is not such a call, the answer stays text. Null
     * when the answer holds no call.
     */
    static Answer toolCalls(String text, JsonArray tools, int tokens) {
        Map<String, JsonObject> names = new HashMap<>();
        for (Object tool : tools) {
            JsonObject function = ((JsonObject) tool).getJsonObject("function");
            names.put(function.getString("name"), function.getJsonObject("parameters"));
        }
        List<JsonObject> calls = new ArrayList<>();
        Matcher blocks = TOOL_CALL.matcher(text);
        StringBuilder content = new StringBuilder();
        int at = 0;
        while (blocks.find()) {
            JsonObject call = call(blocks.group(1), names);
            if (call == null) {
                return null;
            }
            calls.add(call);
            content.append(text, at, blocks.start());
            at = blocks.end();
        }
        content.append(text.substring(at));
        if (calls.isEmpty()) {
            JsonObject call = text.strip().startsWith("{") ? call(text, names) : null;
            if (call == null) {
                return null;
            }
            calls.add(call);
            content.setLength(0);
        }
        JsonArray out = new JsonArray();
        calls.forEach(out::add);
        String rest = content.toString().strip();
        return new Answer(rest.isEmpty() ? null : rest, out, "tool_calls", tokens);
    }

    private static JsonObject call(String json, Map<String, JsonObject> names) {
        JsonObject call;
        try {
            call = new JsonObject(json.strip());
        } catch (DecodeException | ClassCastException e) {
            return null;
        }
        Object name = call.getValue("name");
        Object arguments = call.containsKey("arguments") ? call.getValue("arguments") : call.getValue("parameters");
        if (arguments instanceof String encoded) {
            try {
                arguments = new JsonObject(encoded);
            } catch (DecodeException | ClassCastException e) {
                return null;
            }
        }
        if (!(name instanceof String function) || !names.containsKey(function)
                || !(arguments instanceof JsonObject object) || !SchemaMatch.matches(object, names.get(function))) {
            return null;
        }
        return toolCall(function, object);
    }

    /**
     * llama.cpp's sampling for one choice: OpenAI's defaults (temperature 1, top_p 1, no top_k or min_p). A request
     * that asks for a reproducible answer (greedy, or a seed) is computed without the prompt cache: a cached prompt's
     * last token is evaluated in a batch of another size, whose logits differ in the last bits, and a near tie can then
     * turn a greedy answer into another one (llama.cpp documents this of {@code cache_prompt}).
     */
    private static InferenceParameters sampling(String prompt, Integer limit, Double temperature, Double topP,
            JsonNode body, Long seed, int choice, List<String> stop) {
        boolean reproducible = seed != null || (temperature != null && temperature == 0);
        InferenceParameters parameters = new InferenceParameters(prompt).setCachePrompt(!reproducible)
                .setNPredict(limit == null ? -1 : limit)
                .setTemperature(temperature == null ? 1f : temperature.floatValue())
                .setTopP(topP == null ? 1f : topP.floatValue()).setTopK(0).setMinP(0f)
                .setPresencePenalty((float) body.path("presence_penalty").asDouble(0))
                .setFrequencyPenalty((float) body.path("frequency_penalty").asDouble(0));
        if (seed != null) {
            parameters.setSeed((int) ((seed + choice) & 0x7fffffffL));
        }
        if (!stop.isEmpty()) {
            parameters.setStopStrings(stop.toArray(String[]::new));
        }
        return parameters;
    }

    /** One generation's text (end token removed), why it ended, and its tokens. */
    private record Generated(String text, String finishReason, int tokens) {
    }

    /**
     * Runs one generation, giving each printed piece to {@code onPiece} (when not null) as llama.cpp produces it.
     * Tokens are counted by tokenizing the answer again (the bindings report no counts).
     */
    private Generated run(LlamaModel llama, InferenceParameters parameters, Integer limit, List<String> stop,
            Exchange exchange, Consumer<String> onPiece) {
        StringBuilder text = new StringBuilder();
        int pieces = 0;
        boolean ended = false;
        Iterator<LlamaOutput> outputs = llama.generate(parameters).iterator();
        while (outputs.hasNext()) {
            if (exchange.cancelled()) {
                ((LlamaIterator) outputs).cancel();
                break;
            }
            String piece = outputs.next().text;
            for (String end : endTokens) {
                if (piece.endsWith(end)) {
                    piece = piece.substring(0, piece.length() - end.length());
                    ended = true;
                }
            }
            if (piece.isEmpty()) {
                continue;
            }
            pieces++;
            text.append(piece);
            if (onPiece != null) {
                onPiece.accept(piece);
            }
        }
        // Not ended by an end token: by the limit (or the context), or by a stop string when the answer is shorter
        // than the limit. A piece is at least one token; the text tokenized again may count more (a character's
        // bytes split over tokens) or fewer (bytes of an unfinished character are not printed), so a generation
        // that reached the limit counts the limit.
        int counted = Math.max(pieces, text.isEmpty() ? 0 : llama.encode(text.toString()).length);
        boolean length = !ended && (limit == null || stop.isEmpty() || counted >= limit);
        int tokens = length && limit != null ? limit : counted + (ended ? 1 : 0);
        if (limit != null) {
            tokens = Math.min(tokens, limit);
        }
        return new Generated(text.toString(), length ? "length" : "stop", tokens);
    }

    @Override
    public void check(TextCompletionRequest request, String modelId) {
        if (request.prompts() == null) {
            throw InferenceFailure.invalid("prompt", "The model '" + modelId
                    + "' takes text prompts only: token arrays of other tokenizers mean nothing to it");
        }
        int asked = request.maxTokensOrDefault();
        if (asked > maxTokens) {
            throw InferenceFailure.maxTokensTooLarge("max_tokens", asked, maxTokens, modelId);
        }
        if (asked < 1) {
            throw InferenceFailure.invalid("max_tokens",
                    "'max_tokens' must be at least 1 for the model '" + modelId + "'");
        }
        if ((long) request.prompts().size() * request.n() > MAX_TEXT_CHOICES) {
            throw InferenceFailure.invalid(request.prompts().size() > MAX_TEXT_CHOICES ? "prompt" : "n", "The model '"
                    + modelId + "' answers at most " + MAX_TEXT_CHOICES + " choices (prompts times n) per request");
        }
        // logprobs: see the class comment; suffix would need llama.cpp's infill, which only fill-in-the-middle
        // models have
        if (request.logprobs() != null) {
            throw InferenceFailure.unsupported("logprobs", modelId);
        }
        if (request.suffix() != null) {
            throw InferenceFailure.unsupported("suffix", modelId);
        }
        JsonNode bestOf = request.body().get("best_of");
        if (bestOf != null && !bestOf.isNull() && bestOf.asInt() != request.n()) {
            throw InferenceFailure.unsupported("best_of", modelId);
        }
        JsonNode bias = request.body().get("logit_bias");
        if (bias != null && !bias.isNull() && !bias.isEmpty()) {
            throw InferenceFailure.unsupported("logit_bias", modelId);
        }
    }

    /**
     * The prompts continued as written (no chat template), one choice per turn
     * ({@link TextCompletionExchange.LocalTextCompletion}).
     */
    @Override
    public void complete(TextCompletionExchange exchange) {
        TextCompletionRequest request = exchange.request();
        String modelId = exchange.model().id();
        new TextCompletionExchange.LocalTextCompletion(exchange) {

            private LlamaModel llama;

            @Override
            void load() {
                llama = model.get();
            }

            @Override
            TextCompletionExchange.Continuation continueText(String prompt, int i, Consumer<String> onPiece) {
                int limit = request.maxTokensOrDefault();
                InferenceParameters parameters = sampling(prompt, limit, request.temperature(), request.topP(),
                        request.body(), request.seed(), i, request.stop());
                Generated generated = run(llama, parameters, limit, request.stop(), exchange, onPiece);
                return new TextCompletionExchange.Continuation(generated.text(), generated.finishReason(),
                        i == 0 ? llama.encode(prompt).length : 0, generated.tokens());
            }

            @Override
            InferenceFailure failed(Throwable e) {
                return GgufBackend.failed(modelId, e);
            }
        }.queueOn(workers);
    }

    @Override
    public void check(EmbeddingRequest request, String modelId) {
        if (request.texts() == null) {
            throw InferenceFailure.invalid("input", "The model '" + modelId
                    + "' takes text input only: token arrays of other tokenizers mean nothing to it");
        }
    }

    @Override
    public void embed(EmbeddingExchange exchange) {
        new EmbeddingInputs(exchange).queueOn(workers);
    }

    /**
     * One vector per input, pooled over its tokens by llama.cpp (the file's own pooling, else the last token) and
     * normalized to length 1, one input per turn ({@link LocalChoices}). An input longer than a slot's context is a 400
     * (llama.cpp would not embed it); {@code dimensions} must be the model's own.
     */
    private final class EmbeddingInputs extends LocalChoices {

        private final EmbeddingExchange exchange;
        private final EmbeddingRequest request;
        private final String modelId;
        private final List<float[]> vectors;
        private LlamaModel llama;
        private int tokens;

        EmbeddingInputs(EmbeddingExchange exchange) {
            super(exchange, exchange.request().texts().size());
            this.exchange = exchange;
            this.request = exchange.request();
            this.modelId = exchange.model().id();
            this.vectors = new ArrayList<>(request.texts().size());
        }

        @Override
        void start() {
            llama = embedder.get();
        }

        @Override
        void generate(int index) {
            String text = request.texts().get(index);
            int counted = llama.encode(text).length;
            if (counted + 1 > slotContext()) { // the bindings add a start token to what they embed
                throw InferenceFailure.invalid("input", "Input " + index + " has " + counted + " tokens; the model '"
                        + modelId + "' embeds at most " + (slotContext() - 1));
            }
            tokens += counted;
            float[] vector = embed(llama, text);
            if (request.dimensions() != null && request.dimensions() != vector.length) {
                throw InferenceFailure.invalid("dimensions", "This model does not support specifying dimensions.");
            }
            vectors.add(vector);
        }

        @Override
        void end() {
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
        InferenceFailure failed(Throwable e) {
            LOG.errorf(e, "GGUF model %s failed to embed", modelId);
            return new InferenceFailure(500, "The model '" + modelId + "' failed", null, null, null);
        }
    }

    /**
     * {@code llama.embed(text)}, with the bindings' task loop woken should it miss the task. The bindings post an
     * embedding as a task to llama.cpp's server loop and wait for its result; now and then the loop sleeps through the
     * task, and the caller waits forever (the tiny test model, embedding in a loop on one thread, froze after 50 to
     * 2,400 calls; LocalFairnessTest's GGUF embedding hung in two full runs). Any other task posted to the loop wakes
     * it, and it then does both. So while the call has not returned, a one-word embedding is posted from another thread
     * every {@value #NUDGE_AFTER_MS} ms, and its answer dropped.
     */
    static float[] embed(LlamaModel llama, String text) {
        ScheduledFuture<?> nudges = NUDGE_TIMER.scheduleWithFixedDelay(() -> NUDGES.execute(() -> nudge(llama)),
                NUDGE_AFTER_MS, NUDGE_AFTER_MS, TimeUnit.MILLISECONDS);
        try {
            return llama.embed(text);
        } finally {
            nudges.cancel(false);
        }
    }

    private static void nudge(LlamaModel llama) {
        try {
            llama.embed("wake");
        } catch (RuntimeException e) {
            LOG.debug("An embedding posted to wake llama.cpp's task loop failed", e);
        }
    }

    /** A generation that llama.cpp failed: logged, and a 500 naming the model (not what failed inside it). */
    private static InferenceFailure failed(String modelId, Throwable e) {
        LOG.errorf(e, "GGUF model %s failed", modelId);
        return new InferenceFailure(500, "The model '" + modelId + "' failed", null, null, null);
    }

    private static String chunk(String id, long created, String model, int index, JsonObject delta,
            String finishReason) {
        JsonObject choice = new JsonObject().put("index", index).put("delta", delta).putNull("logprobs")
                .put("finish_reason", finishReason);
        return new JsonObject().put("id", id).put("object", "chat.completion.chunk").put("created", created)
                .put("model", model).put("choices", new JsonArray().add(choice)).encode();
    }

    /**
     * Stops the generation threads. The loaded models stay in memory: the bindings' close only stops llama.cpp's task
     * loop and does not free the model (see docs/inference.md, "GGUF models").
     */
    @Override
    public void close() {
        workers.shutdownNow();
        model.close();
        embedder.close();
    }
}
