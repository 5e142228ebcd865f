package dev.fulcrum.tinker;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.quarkus.narayana.jta.QuarkusTransaction;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.inference.InferenceCaller;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.TokenSampler;
import dev.fulcrum.inference.UsageMeter;
import dev.fulcrum.inference.catalog.CatalogModel;
import dev.fulcrum.inference.catalog.CheckpointModels;
import dev.fulcrum.inference.catalog.ModelCatalog;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.training.TrainingModels;

/**
 * Sampling clients and their samples: a sample runs on Fulcrum's llama.cpp engine (the GGUF base, with the saved
 * weights' adapter) or on the vLLM server of an {@code openai-compatible} base (its completions with token ids, the
 * adapter loaded at run time), on threads of its own, and its result ends its future.
 */
@ApplicationScoped
public class TinkerSampling {

    private static final Logger LOG = Logger.getLogger(TinkerSampling.class);
    static final Pattern PATH = Pattern.compile("tinker://([^/]+)/(sampler_weights|weights)/([^/]+)");
    /** The most samples of one request. */
    static final int MAX_SAMPLES = 16;

    @Inject
    Access access;

    @Inject
    Tinker tinker;

    @Inject
    TinkerFutures futures;

    @Inject
    ModelCatalog catalog;

    @Inject
    CheckpointModels checkpoints;

    @Inject
    TrainingModels trainingModels;

    @Inject
    StoredJson json;

    @Inject
    UsageMeter meter;

    private ThreadPoolExecutor threads;

    private synchronized ThreadPoolExecutor threads() {
        if (threads == null) {
            AtomicInteger count = new AtomicInteger();
            threads = new ThreadPoolExecutor(4, 4, 60, TimeUnit.SECONDS, new ArrayBlockingQueue<>(256), task -> {
                Thread thread = new Thread(task, "tinker-sample-" + count.incrementAndGet());
                thread.setDaemon(true);
                return thread;
            });
        }
        return threads;
    }

    @PreDestroy
    synchronized void stop() {
        if (threads != null) {
            threads.shutdownNow();
        }
    }

    /** A sampling client of a base model or of saved weights of the caller's model; the same seq id: the same. */
    @Transactional
    public String createSession(ObjectNode body) {
        String sessionId = TinkerInput.text(body, "session_id", true, 200);
        long seq = TinkerInput.integer(body, "sampling_session_seq_id", 0, 1_000_000);
        String base = TinkerInput.text(body, "base_model", false, 300);
        String path = TinkerInput.text(body, "model_path", false, 500);
        TinkerSession session = tinker.session(sessionId);
        String id = session.id + ":sample:" + seq;
        if (TinkerSampler.findById(id) != null) {
            return id;
        }
        TinkerSampler sampler = new TinkerSampler();
        sampler.id = id;
        sampler.sessionId = session.id;
        sampler.userId = session.userId;
        if ((base == null) == (path == null)) {
            throw ApiException.invalid(Violation.of("Give either base_model or model_path", "value_error", "body"));
        }
        if (path != null) {
            Tinker.Saved saved = tinker.saved(path, "body", "model_path");
            TinkerModel model = saved.model();
            TrainingModels.ModelView view = trainingModels.model(model.trainingModelId, Role.VIEWER);
            sampler.baseModel = model.baseModel;
            sampler.modelPath = path;
            sampler.checkpoint = "wandb-artifact:///" + view.entity() + "/" + view.project() + "/" + view.name()
                    + ":step" + saved.checkpoint().step;
        } else {
            Optional<CatalogModel> model = catalog.lookup(base);
            if (model.isEmpty() || !(CatalogModel.GGUF.equals(model.get().backend())
                    || CatalogModel.OPENAI_COMPATIBLE.equals(model.get().backend()))) {
                throw ApiException.invalid(Violation.of(
                        "Not a GGUF model of the inference catalog (Fulcrum's llama.cpp engine) or one served by vLLM",
                        "value_error", "body", "base_model"));
            }
            sampler.baseModel = base;
        }
        sampler.persist();
        return id;
    }

    /** The checks of an asample request: the sampler, the prompt's tokens, the sampling parameters. */
    TokenSampler.Asked asked(ObjectNode body) {
        JsonNode count = body.get("num_samples");
        int samples = count == null || count.isNull() ? 1 : count.asInt(-1);
        if (count != null && !count.isNull() && (!count.isIntegralNumber() || samples < 1 || samples > MAX_SAMPLES)) {
            throw ApiException.invalid(
                    Violation.of("Must be an integer from 1 to " + MAX_SAMPLES, "int_type", "body", "num_samples"));
        }
        JsonNode chunks = body.path("prompt").path("chunks");
        if (!chunks.isArray() || chunks.isEmpty()) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body", "prompt", "chunks"));
        }
        List<Integer> prompt = new ArrayList<>();
        for (int c = 0; c < chunks.size(); c++) {
            JsonNode chunk = chunks.get(c);
            if (!chunk.path("type").asText("encoded_text").equals("encoded_text") || !chunk.path("tokens").isArray()) {
                throw ApiException.invalid(Violation.of("Only text chunks (encoded_text) are served", "value_error",
                        "body", "prompt", "chunks", c));
            }
            for (JsonNode token : chunk.get("tokens")) {
                if (!token.isIntegralNumber() || token.asLong() < 0 || token.asLong() > Integer.MAX_VALUE) {
                    throw ApiException.invalid(
                            Violation.of("Must be token ids", "int_type", "body", "prompt", "chunks", c, "tokens"));
                }
                prompt.add(token.asInt());
            }
        }
        if (prompt.isEmpty()) {
            throw ApiException.invalid(Violation.of("The prompt has no token", "value_error", "body", "prompt"));
        }
        JsonNode params = body.path("sampling_params");
        if (!params.isMissingNode() && !params.isNull() && !params.isObject()) {
            throw ApiException.invalid(Violation.of("Must be an object", "dict_type", "body", "sampling_params"));
        }
        Integer maxTokens = null;
        JsonNode max = params.get("max_tokens");
        if (max != null && !max.isNull()) {
            if (!max.isIntegralNumber() || max.asInt() < 1) {
                throw ApiException.invalid(
                        Violation.of("Must be an integer from 1", "int_type", "body", "sampling_params", "max_tokens"));
            }
            maxTokens = max.asInt();
        }
        double temperature = number(params, "temperature", 1.0, 0, 100);
        double topP = number(params, "top_p", 1.0, 0, 1);
        JsonNode topK = params.get("top_k");
        if (topK != null && !topK.isNull()
                && (!topK.isIntegralNumber() || !topK.canConvertToInt() || (topK.asInt() != -1 && topK.asInt() < 1))) {
            throw ApiException.invalid(Violation.of("Must be -1 (no limit) or an integer from 1", "value_error", "body",
                    "sampling_params", "top_k"));
        }
        JsonNode seed = params.get("seed");
        if (seed != null && !seed.isNull() && !seed.isIntegralNumber()) {
            throw ApiException
                    .invalid(Violation.of("Must be an integer", "int_type", "body", "sampling_params", "seed"));
        }
        Set<Integer> stopTokens = new HashSet<>();
        List<String> stopStrings = new ArrayList<>();
        JsonNode stop = params.get("stop");
        if (stop != null && !stop.isNull()) {
            for (JsonNode item : stop.isArray() ? stop : List.of(stop)) {
                if (item.isTextual() && !item.asText().isEmpty()) {
                    stopStrings.add(item.asText());
                } else if (item.isIntegralNumber() && item.asLong() >= 0 && item.asLong() <= Integer.MAX_VALUE) {
                    stopTokens.add(item.asInt());
                } else {
                    throw ApiException.invalid(Violation.of("Must be strings or token ids", "value_error", "body",
                            "sampling_params", "stop"));
                }
            }
        }
        // what the SDK 0.3x can ask beyond 0.18.2's sample: refused when asked, not ignored
        JsonNode alternatives = body.get("prompt_alt_tokens_k");
        if (alternatives != null && !alternatives.isNull() && alternatives.asInt(-1) != 0) {
            throw ApiException.invalid(Violation.of("prompt_alt_tokens_k is not served: send 0", "value_error", "body",
                    "prompt_alt_tokens_k"));
        }
        if (body.path("record_stability_info").asBoolean(false)) {
            throw ApiException.invalid(Violation.of("record_stability_info is not served", "value_error", "body",
                    "record_stability_info"));
        }
        int[] tokens = prompt.stream().mapToInt(Integer::intValue).toArray();
        boolean promptLogprobs = body.path("prompt_logprobs").asBoolean(false);
        int topkPrompt = topk(body, "topk_prompt_logprobs");
        return new TokenSampler.Asked(tokens, samples, maxTokens, temperature, topP,
                topK == null || topK.isNull() || topK.asInt() == -1 ? null : topK.asInt(),
                seed == null || seed.isNull() ? null : seed.asLong(), stopTokens, stopStrings, promptLogprobs,
                topkPrompt, topk(body, "topk_sample_logprobs"),
                TinkerPromptScores.lastN(body, tokens.length, promptLogprobs, topkPrompt),
                TinkerPromptScores.targets(body, tokens.length));
    }

    /**
     * How many likeliest tokens a top-k field asks for at each position: 0 (or absent) to {@link TokenSampler#MAX_TOP}.
     */
    private static int topk(JsonNode body, String field) {
        JsonNode value = body.get(field);
        if (value == null || value.isNull()) {
            return 0;
        }
        if (!value.isIntegralNumber() || value.asLong() < 0 || value.asLong() > TokenSampler.MAX_TOP) {
            throw ApiException.invalid(
                    Violation.of("Must be an integer from 0 to " + TokenSampler.MAX_TOP, "value_error", "body", field));
        }
        return value.asInt();
    }

    private static double number(JsonNode params, String field, double fallback, double min, double max) {
        JsonNode value = params.get(field);
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (!value.isNumber() || value.asDouble() < min || value.asDouble() > max) {
            throw ApiException.invalid(Violation.of("Must be a number from " + min + " to " + max, "float_type", "body",
                    "sampling_params", field));
        }
        return value.asDouble();
    }

    /** Starts a sample: its future, answered by a thread of its own; 429 when too many wait. */
    public String sample(ObjectNode body, String idempotencyKey) {
        long started = System.nanoTime();
        TokenSampler.Asked asked = asked(body);
        String samplerId = TinkerInput.text(body, "sampling_session_id", true, 200);
        Caller caller = access.caller();
        if (asked.targetPromptLogprobs() != null) {
            refuseTargetsOnVllm(samplerId, caller);
        }
        tinker.admitSample(samplerId);
        Tinker.Submitted submitted = QuarkusTransaction.requiringNew()
                .call(() -> tinker.submitSample(samplerId, body, idempotencyKey));
        if (!submitted.fresh()) {
            return submitted.requestId();
        }
        try {
            threads().execute(() -> run(submitted, caller, asked, started));
        } catch (RejectedExecutionException e) {
            futures.end(submitted.requestId(), null, "Too many samples wait: try again", "server");
            throw ApiException.atCapacity("Too many samples wait; try again shortly");
        }
        return submitted.requestId();
    }

    /**
     * A vLLM server cannot score chosen tokens (its completions report the prompt's own and the likeliest ones): a
     * sampler of a base it serves refuses {@code target_prompt_logprobs} before anything is queued.
     */
    private void refuseTargetsOnVllm(String samplerId, Caller caller) {
        TinkerSampler sampler = QuarkusTransaction.requiringNew().call(() -> TinkerSampler.findById(samplerId));
        if (sampler != null && sampler.userId == caller.userId() && catalog.lookup(sampler.baseModel)
                .filter(model -> CatalogModel.OPENAI_COMPATIBLE.equals(model.backend())).isPresent()) {
            throw ApiException.invalid(Violation.of(
                    "target_prompt_logprobs is served on GGUF bases only (Fulcrum's llama.cpp engine): "
                            + sampler.baseModel + " is served by vLLM, whose completions score the "
                            + "prompt's own and the likeliest tokens, not chosen ones",
                    "value_error", "body", TinkerPromptScores.TARGETS));
        }
    }

    /**
     * Samples and ends the future; the usage is recorded as a completion's (the prompt's tokens once, every sample's
     * tokens) for the session's project, with the status the failure's category has (400 {@code user}, 500
     * {@code server}).
     */
    private void run(Tinker.Submitted submitted, Caller caller, TokenSampler.Asked asked, long started) {
        String requestId = submitted.requestId();
        TinkerSampler sampler = submitted.sampler();
        ObjectNode result = null;
        String error = null;
        String category = null;
        int completion = 0;
        try {
            TokenSampler.Sampled sampled = backend(sampler, caller).sampleTokens(asked);
            result = JsonNodeFactory.instance.objectNode().put("type", "sample");
            ArrayNode sequences = result.putArray("sequences");
            for (TokenSampler.Sample sample : sampled.samples()) {
                ObjectNode sequence = sequences.addObject().put("stop_reason", sample.stopReason());
                ArrayNode tokens = sequence.putArray("tokens");
                ArrayNode logprobs = sequence.putArray("logprobs");
                for (int i = 0; i < sample.tokens().length; i++) {
                    tokens.add(sample.tokens()[i]);
                    logprobs.add(sample.logprobs()[i]);
                }
                if (sample.topLogprobs() != null) {
                    addTop(sequence.putArray("topk_logprobs"), sample.topLogprobs());
                }
                completion += sample.tokens().length;
            }
            TinkerPromptScores.write(result, asked, sampled);
        } catch (InferenceFailure e) {
            error = e.getMessage();
            category = e.kind() == ApiException.Kind.INVALID ? "user" : "server";
        } catch (ApiException e) {
            error = e.getMessage();
            category = "user";
        } catch (RuntimeException e) {
            LOG.errorf(e, "Tinker sample %s failed", requestId);
            error = "Sampling failed: " + e;
            category = "server";
        }
        // counted before the future ends, so that the next request of the SDK meets the quota with it
        int status = error == null ? 200 : category.equals("user") ? 400 : 500;
        meter.record(new UsageMeter.Use(UsageMeter.TINKER_SAMPLE, submitted.entity(), submitted.project(),
                caller.userId(), sampler.checkpoint != null ? sampler.checkpoint : sampler.baseModel,
                error == null ? asked.prompt().length : 0, completion,
                (int) TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), status));
        futures.end(requestId, result, error, category);
    }

    /** The SDK's form of top-k logprobs: per position a list of [token id, logprob], likeliest first, or null. */
    static void addTop(ArrayNode positions, List<TokenSampler.Top> tops) {
        for (TokenSampler.Top top : tops) {
            if (top == null) {
                positions.addNull();
                continue;
            }
            ArrayNode pairs = positions.addArray();
            for (int i = 0; i < top.ids().length; i++) {
                pairs.addArray().add(top.ids()[i]).add(top.logprobs()[i]);
            }
        }
    }

    private TokenSampler backend(TinkerSampler sampler, Caller caller) {
        Optional<ServedModel> served;
        try {
            if (sampler.checkpoint != null) {
                String[] parts = sampler.checkpoint.substring("wandb-artifact:///".length()).split("/");
                served = checkpoints.find(sampler.checkpoint, new InferenceCaller(caller, parts[0], parts[1]))
                        .toCompletableFuture().get();
            } else {
                served = catalog.find(sampler.baseModel).toCompletableFuture().get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("Interrupted");
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException runtime ? runtime : new IllegalStateException(e);
        }
        if (served.isEmpty() && sampler.checkpoint != null) {
            throw ApiException.notFound("The saved weights " + sampler.modelPath + " of this sampling client ("
                    + sampler.checkpoint + ") no longer exist: they were deleted");
        }
        if (served.isEmpty() || !(served.get().backend() instanceof TokenSampler tokens)) {
            throw ApiException.notFound(
                    "The sampler's model " + (sampler.checkpoint != null ? sampler.checkpoint : sampler.baseModel)
                            + " is not served by the llama.cpp engine or vLLM");
        }
        return tokens;
    }
}
