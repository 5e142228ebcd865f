package dev.fulcrum.inference.engine.upstream;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;

import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.InferenceFailure.ServerFault;
import dev.fulcrum.inference.TokenSampler;
import dev.fulcrum.inference.catalog.CatalogModel;
import dev.fulcrum.inference.catalog.CheckpointExports;

/**
 * Token-level sampling ({@link TokenSampler}, the Tinker API's {@code asample}) on a vLLM server, through its
 * OpenAI-compatible {@code POST {base-url}/completions} and vLLM's extensions of it: the prompt as a list of token ids,
 * {@code n} samples, {@code top_k}, {@code seed}, {@code stop_token_ids}, {@code logprobs: k} (the sampled token's
 * log-probability, and the k likeliest at each position; vLLM reports the model's own, before temperature and
 * top-k/top-p, by default), {@code prompt_logprobs: k} (the prompt's own tokens, with the k likeliest at each position)
 * and {@code return_tokens_as_token_ids} (each token of {@code logprobs.tokens} as {@code token_id:N}); it cannot score
 * chosen tokens ({@code target_prompt_logprobs}: the caller's error). Its attempts are {@link RoutedBackend}'s
 * ({@link Attempts}: the same choice of replica, the adapter loaded first and again on a replica that lost it, another
 * replica for a fault worth retrying; the replicas' health and metrics kept); the caller's thread waits for the answer.
 */
final class UpstreamTokens {

    private static final Logger LOG = Logger.getLogger(UpstreamTokens.class);
    private static final String TOKEN_ID = "token_id:";
    /** Why vLLM cannot answer target tokens' logprobs: its completions report the likeliest tokens, not chosen ones. */
    static final String NO_TARGETS = "target_prompt_logprobs is served on GGUF bases only (Fulcrum's llama.cpp engine):"
            + " vLLM's /v1/completions scores the prompt's own tokens and the likeliest ones, not chosen token ids";

    private final Replicas replicas;
    private final ObjectMapper json;
    private final AdapterLoader loader;
    private final RoutingMetrics metrics;
    private final String upstreamModel;
    private final CheckpointExports.Export adapter;
    private final Integer maxTokens;
    private final int retries;
    private final int prefixChars;

    UpstreamTokens(Replicas replicas, ObjectMapper json, AdapterLoader loader, RoutingMetrics metrics,
            String upstreamModel, CheckpointExports.Export adapter, Integer maxTokens, int retries, int prefixChars) {
        this.replicas = replicas;
        this.json = json;
        this.loader = loader;
        this.metrics = metrics;
        this.upstreamModel = upstreamModel;
        this.adapter = adapter;
        this.maxTokens = maxTokens;
        this.retries = retries;
        this.prefixChars = prefixChars;
    }

    /** The request's body for vLLM. */
    ObjectNode body(TokenSampler.Asked asked) {
        ObjectNode body = json.createObjectNode().put("model", upstreamModel);
        ArrayNode prompt = body.putArray("prompt");
        for (int token : asked.prompt()) {
            prompt.add(token);
        }
        body.put("n", asked.samples());
        if (asked.maxTokens() != null) {
            body.put("max_tokens", asked.maxTokens());
        }
        if (asked.temperature() != null) {
            body.put("temperature", asked.temperature());
        }
        if (asked.topP() != null) {
            body.put("top_p", asked.topP());
        }
        if (asked.topK() != null) {
            body.put("top_k", asked.topK());
        }
        if (asked.seed() != null) {
            body.put("seed", asked.seed());
        }
        if (!asked.stopStrings().isEmpty()) {
            ArrayNode stop = body.putArray("stop");
            asked.stopStrings().forEach(stop::add);
        }
        if (!asked.stopTokens().isEmpty()) {
            ArrayNode stop = body.putArray("stop_token_ids");
            asked.stopTokens().stream().sorted().forEach(stop::add);
        }
        body.put("logprobs", asked.topkSampleLogprobs());
        if (asked.promptLogprobs() || asked.topkPromptLogprobs() > 0) {
            body.put("prompt_logprobs", asked.topkPromptLogprobs());
        }
        body.put("return_tokens_as_token_ids", true);
        body.put("stream", false);
        return body;
    }

    /** Samples, waiting on the caller's thread; failures are {@link InferenceFailure}s as the gateway's. */
    TokenSampler.Sampled sample(TokenSampler.Asked asked, String modelId) {
        if (maxTokens != null && asked.maxTokens() != null && asked.maxTokens() > maxTokens) {
            throw InferenceFailure.maxTokensTooLarge("max_tokens", asked.maxTokens(), maxTokens, modelId);
        }
        if (asked.targetPromptLogprobs() != null) {
            throw InferenceFailure.invalid("target_prompt_logprobs",
                    NO_TARGETS + " ('" + modelId + "' is served by vLLM)");
        }
        ObjectNode body = body(asked);
        Buffer payload;
        try {
            payload = Buffer.buffer(json.writeValueAsBytes(body));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        String key = CatalogModel.PREFIX_AFFINITY.equals(replicas.model().routing())
                ? PrefixKey.text(body.get("prompt"), prefixChars)
                : null;
        Attempts attempts = new Attempts(replicas, key, adapter == null ? null : adapter.name(), false, retries);
        Replica replica = attempts.first();
        if (replica == null) {
            throw InferenceFailure.noReplica(replicas.modelId());
        }
        while (true) {
            long started = System.nanoTime();
            replica.begin();
            InferenceFailure failure;
            try {
                Answer answer = attempt(replica, payload, modelId);
                if (answer.status() < 300) {
                    replicas.ended(replica, System.nanoTime() - started, true, false, "ok");
                    metrics.attempt(replicas.modelId(), replica, "ok");
                    try {
                        return read(answer.body(), asked, modelId);
                    } catch (InferenceFailure e) {
                        LOG.warnf("Model %s: replica %s answered token sampling (status %d) with %s", modelId,
                                replica.name, answer.status(), UpstreamErrors.excerpt(answer.body()));
                        throw e;
                    }
                }
                failure = refused(answer, modelId);
            } catch (InferenceFailure e) {
                failure = e;
            }
            ServerFault fault = failure.fault();
            boolean answered = fault == null || fault.reason() == ServerFault.Reason.ANSWERED;
            String outcome = RoutedBackend.outcome(failure.status(), fault);
            replicas.ended(replica, System.nanoTime() - started, answered, fault != null && fault.failing(), outcome);
            metrics.attempt(replicas.modelId(), replica, outcome);
            Attempts.Next next = attempts.after(replica, fault);
            if (next == null) {
                throw failure;
            }
            if (!next.reload()) {
                metrics.retried(replicas.modelId(), replica);
            }
            replica = next.replica();
        }
    }

    private record Answer(int status, Buffer body) {
    }

    /** One attempt on the replica: the adapter loaded, then the completion; its answer, or the failure to get one. */
    private Answer attempt(Replica replica, Buffer payload, String modelId) {
        long wait = replicas.model().timeoutMs() + TimeUnit.SECONDS.toMillis(30);
        try {
            if (adapter != null) {
                loader.ensure(replicas.modelId(), replica, adapter, modelId).get(wait, TimeUnit.MILLISECONDS);
            }
            return replica.server.client()
                    .request(replica.server.options(HttpMethod.POST, "completions", "application/json"))
                    .compose(request -> request.send(payload))
                    .compose(response -> response.body().map(body -> new Answer(response.statusCode(), body)))
                    .toCompletionStage().toCompletableFuture().get(wait, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw InferenceFailure.upstreamFailed(modelId, "interrupted");
        } catch (TimeoutException e) {
            throw UpstreamErrors.translate(modelId, e, "no answer");
        } catch (ExecutionException e) {
            if (e.getCause() instanceof InferenceFailure known) {
                throw known;
            }
            throw UpstreamErrors.translate(modelId, e.getCause(), "connection closed");
        }
    }

    /** The server's refusal: a 4xx with its message and status, a 5xx a 502 (as the gateway relays them). */
    private InferenceFailure refused(Answer answer, String modelId) {
        int status = answer.status();
        String message = UpstreamErrors.message(json, answer.body());
        if (status >= 500) {
            return InferenceFailure.upstreamFailed(modelId, message == null ? "status " + status : message)
                    .causedBy(ServerFault.answered(status));
        }
        return InferenceFailure
                .upstream(UpstreamErrors.refusal(status),
                        new InferenceFailure.Upstream(status, "invalid_request_error"),
                        "The server of the model '" + modelId + "' refused the request (status " + status + "): "
                                + (message == null ? "no message" : message),
                        null, null, null)
                .causedBy(ServerFault.answered(status));
    }

    /** vLLM's completion: each choice's tokens ({@code token_id:N}), their logprobs and why it stopped. */
    private TokenSampler.Sampled read(Buffer body, TokenSampler.Asked asked, String modelId) {
        JsonNode answer;
        try {
            answer = json.readTree(body.getBytes());
        } catch (Exception e) {
            throw UpstreamErrors.badAnswer(modelId);
        }
        JsonNode choices = answer.path("choices");
        if (!choices.isArray() || choices.size() != asked.samples()) {
            throw notVllm(modelId,
                    "answered " + (choices.isArray() ? choices.size() : "no") + " choices for n = " + asked.samples());
        }
        List<JsonNode> ordered = new ArrayList<>();
        choices.forEach(ordered::add);
        ordered.sort(java.util.Comparator.comparingInt(choice -> choice.path("index").asInt()));
        List<TokenSampler.Sample> samples = new ArrayList<>();
        for (JsonNode choice : ordered) {
            JsonNode tokens = choice.path("logprobs").path("tokens");
            JsonNode logprobs = choice.path("logprobs").path("token_logprobs");
            if (!tokens.isArray() || !logprobs.isArray() || tokens.size() != logprobs.size()) {
                throw notVllm(modelId, "answered no logprobs.tokens and token_logprobs of the same length");
            }
            int[] ids = new int[tokens.size()];
            float[] values = new float[tokens.size()];
            for (int i = 0; i < ids.length; i++) {
                String token = tokens.get(i).asText("");
                Integer id = tokenId(token);
                if (id == null) {
                    throw notVllm(modelId, "answered the token \"" + token + "\", not token_id:<id>");
                }
                ids[i] = id;
                values[i] = logprobs.get(i).isNumber() ? logprobs.get(i).floatValue() : Float.NaN;
            }
            String finish = choice.path("finish_reason").asText("");
            if (!finish.equals("stop") && !finish.equals("length")) {
                throw InferenceFailure.upstreamFailed(modelId, "a sample ended with finish_reason " + finish)
                        .causedBy(ServerFault.answered(200));
            }
            samples.add(new TokenSampler.Sample(ids, values, finish,
                    asked.topkSampleLogprobs() > 0
                            ? topSampleLogprobs(choice, ids.length, asked.topkSampleLogprobs(), modelId)
                            : null));
        }
        return new TokenSampler.Sampled(samples,
                asked.promptLogprobs() ? promptLogprobs(ordered.get(0), asked.prompt(), modelId) : null,
                asked.topkPromptLogprobs() > 0
                        ? topPromptLogprobs(ordered.get(0), asked.prompt().length, asked.topkPromptLogprobs(), modelId)
                        : null,
                null);
    }

    /**
     * vLLM's {@code prompt_logprobs}: null at position 0, then per position a map from token id to {@code {logprob,
     * rank, decoded_token}} that holds the prompt's own token.
     */
    private static float[] promptLogprobs(JsonNode choice, int[] prompt, String modelId) {
        JsonNode positions = choice.path("prompt_logprobs");
        if (!positions.isArray() || positions.size() != prompt.length) {
            throw notVllm(modelId, "answered no prompt_logprobs for each of the " + prompt.length + " prompt tokens");
        }
        float[] values = new float[prompt.length];
        for (int i = 0; i < prompt.length; i++) {
            JsonNode position = positions.get(i);
            JsonNode own = position.path(String.valueOf(prompt[i])).path("logprob");
            values[i] = i == 0 || !own.isNumber() ? Float.NaN : own.floatValue();
            if (i > 0 && !own.isNumber()) {
                throw notVllm(modelId, "answered no logprob of the prompt's token " + prompt[i] + " at position " + i);
            }
        }
        return values;
    }

    /**
     * The {@code k} likeliest tokens at each prompt position from vLLM's {@code prompt_logprobs}: the entries of rank 1
     * to k (the prompt's own token is there too, whatever its rank), by rank; null at position 0.
     */
    private static List<TokenSampler.Top> topPromptLogprobs(JsonNode choice, int length, int k, String modelId) {
        JsonNode positions = choice.path("prompt_logprobs");
        if (!positions.isArray() || positions.size() != length) {
            throw notVllm(modelId, "answered no prompt_logprobs for each of the " + length + " prompt tokens");
        }
        List<TokenSampler.Top> top = new ArrayList<>();
        top.add(null);
        for (int i = 1; i < length; i++) {
            List<Map.Entry<String, JsonNode>> ranked = new ArrayList<>();
            positions.get(i).fields().forEachRemaining(entry -> {
                int rank = entry.getValue().path("rank").asInt(Integer.MAX_VALUE);
                if (rank >= 1 && rank <= k && entry.getValue().path("logprob").isNumber()) {
                    ranked.add(entry);
                }
            });
            ranked.sort(java.util.Comparator.comparingInt(entry -> entry.getValue().path("rank").asInt()));
            int[] ids = new int[ranked.size()];
            float[] logprobs = new float[ranked.size()];
            for (int j = 0; j < ids.length; j++) {
                try {
                    ids[j] = Integer.parseInt(ranked.get(j).getKey());
                } catch (NumberFormatException e) {
                    throw notVllm(modelId,
                            "answered the prompt_logprobs key \"" + ranked.get(j).getKey() + "\", not a token id");
                }
                logprobs[j] = ranked.get(j).getValue().path("logprob").floatValue();
            }
            top.add(new TokenSampler.Top(ids, logprobs));
        }
        return top;
    }

    /**
     * The {@code k} likeliest tokens at each sampled position from vLLM's {@code logprobs.top_logprobs}: per position a
     * map from {@code token_id:N} to its logprob, which holds the k likeliest and the sampled token (k + 1 entries when
     * that one is not among them), sorted here by logprob; null where vLLM reported none.
     */
    private static List<TokenSampler.Top> topSampleLogprobs(JsonNode choice, int length, int k, String modelId) {
        JsonNode positions = choice.path("logprobs").path("top_logprobs");
        if (!positions.isArray() || positions.size() != length) {
            throw notVllm(modelId, "answered no logprobs.top_logprobs for each of the " + length + " sampled tokens");
        }
        List<TokenSampler.Top> top = new ArrayList<>();
        for (JsonNode position : positions) {
            if (position.isNull()) {
                top.add(null);
                continue;
            }
            List<Map.Entry<Integer, Float>> entries = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = position.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> entry = it.next();
                Integer id = tokenId(entry.getKey());
                if (id == null || !entry.getValue().isNumber()) {
                    throw notVllm(modelId, "answered the top_logprobs entry \"" + entry.getKey()
                            + "\", not token_id:<id> with its logprob");
                }
                entries.add(Map.entry(id, entry.getValue().floatValue()));
            }
            entries.sort(Map.Entry.<Integer, Float> comparingByValue().reversed());
            int n = Math.min(k, entries.size());
            int[] ids = new int[n];
            float[] logprobs = new float[n];
            for (int j = 0; j < n; j++) {
                ids[j] = entries.get(j).getKey();
                logprobs[j] = entries.get(j).getValue();
            }
            top.add(new TokenSampler.Top(ids, logprobs));
        }
        return top;
    }

    /** The id of a token vLLM printed as {@code token_id:N}, else null. */
    private static Integer tokenId(String token) {
        if (!token.startsWith(TOKEN_ID)) {
            return null;
        }
        try {
            return Integer.parseInt(token.substring(TOKEN_ID.length()));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static InferenceFailure notVllm(String modelId, String what) {
        return InferenceFailure
                .upstreamFailed(modelId,
                        what + " (token sampling needs vLLM's /completions"
                                + " with return_tokens_as_token_ids, logprobs and prompt_logprobs)")
                .causedBy(new ServerFault(ServerFault.Reason.BAD_ANSWER, 0));
    }
}
