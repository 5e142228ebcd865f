package dev.fulcrum.inference;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * One replica of a model server for the routing tests, as vLLM answers: chat completions (plain and streamed) of the
 * model {@code base-model} and of the LoRA adapters loaded at run time ({@code POST /v1/load_lora_adapter},
 * {@code /v1/unload_lora_adapter}; 404 for an adapter it does not hold), completions of a prompt of token ids with
 * vLLM's extensions (see {@link #completion}), {@code GET /health}. It answers after a fixed service time (so that it
 * can be the bottleneck), or with a chosen failure ({@link #status}); it can be stopped (its connections close) and
 * started again on the same address and port, forgetting its adapters as a restarted vLLM does. Several listen on one
 * port at different loopback addresses (127.0.0.2, 127.0.0.3, ...), as the pods behind one host name do.
 */
public final class ReplicaStub implements AutoCloseable {

    public static final String BASE = "base-model";
    /** The token ids it knows: a prompt's token from here on is refused (400), as vLLM refuses it. */
    public static final int VOCABULARY = 50_000;
    private static final long CREATED = 1_700_000_000L;

    private final Vertx vertx = Vertx.vertx();
    private final String host;
    private volatile int port;
    private volatile HttpServer server;
    /** The answer's delay, before anything of it is sent (a stream's too). */
    public volatile long serviceMillis;
    /** 200 answers; 429, 500, 503 answer that status to chats instead. */
    public volatile int status = 200;
    public final AtomicInteger chats = new AtomicInteger();
    /** The first user message of each chat answered, in order (a conversation's name in the affinity test). */
    public final List<String> conversations = new CopyOnWriteArrayList<>();
    public final List<String> loads = new CopyOnWriteArrayList<>();
    public final List<String> unloads = new CopyOnWriteArrayList<>();
    public final Set<String> holding = ConcurrentHashMap.newKeySet();
    /** The {@code lora_path} of each adapter loaded, by name. */
    public final Map<String, String> loadedFrom = new ConcurrentHashMap<>();
    /** The body of each {@code /v1/completions} request, in order. */
    public final List<JsonObject> completions = new CopyOnWriteArrayList<>();

    /** A replica on {@code host} at {@code port} (0: a free one). */
    public ReplicaStub(String host, int port) {
        this.host = host;
        this.port = port;
        start();
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    public String baseUrl() {
        return "http://" + host + ":" + port + "/v1";
    }

    /** Its name in the admin API and the metrics. */
    public String name() {
        return host + ":" + port;
    }

    /**
     * Listens (again) on its address and port, holding no adapter. A free port is chosen below the system's ephemeral
     * range (32768 and up on Linux): a replica restarted on its port would otherwise find it taken, now and then, as
     * the local port of some outgoing connection. Where the machine's ephemeral range is wider, that can still happen
     * at 127.0.0.1 (a probe of the stopped replica may even connect to itself there): a stub that is restarted listens
     * at another loopback address (outgoing connections leave from 127.0.0.1), and a restart waits up to five seconds
     * for its port.
     */
    public synchronized void start() {
        holding.clear();
        Exception failed = null;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        for (int attempt = 0; port == 0 ? attempt < 50 : attempt == 0 || System.nanoTime() < deadline; attempt++) {
            int at = port != 0 ? port : 20_000 + java.util.concurrent.ThreadLocalRandom.current().nextInt(12_000);
            try {
                server = vertx.createHttpServer().requestHandler(this::handle).listen(at, host).toCompletionStage()
                        .toCompletableFuture().get(10, TimeUnit.SECONDS);
                port = server.actualPort();
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (Exception e) {
                failed = e; // taken: another port, or the same one a moment later
                if (port != 0) {
                    pause();
                }
            }
        }
        throw new IllegalStateException(failed);
    }

    private static void pause() {
        try {
            Thread.sleep(100);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops listening and closes every connection, as a replica that dies. */
    public synchronized void stop() {
        try {
            server.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private void handle(HttpServerRequest request) {
        if (request.path().equals("/health")) {
            request.response().setStatusCode(200).end();
            return;
        }
        request.body().onSuccess(buffer -> {
            switch (request.path()) {
                case "/v1/load_lora_adapter" -> {
                    JsonObject load = buffer.toJsonObject();
                    String name = load.getString("lora_name");
                    loadedFrom.put(name, load.getString("lora_path"));
                    loads.add(name);
                    holding.add(name);
                    request.response().end("Success: LoRA adapter '" + name + "' added successfully.");
                }
                case "/v1/unload_lora_adapter" -> {
                    String name = buffer.toJsonObject().getString("lora_name");
                    unloads.add(name);
                    holding.remove(name);
                    request.response().end("Success: LoRA adapter '" + name + "' removed successfully.");
                }
                case "/v1/chat/completions" ->
                        vertx.setTimer(Math.max(1, serviceMillis), t -> chat(request, buffer.toJsonObject()));
                case "/v1/completions" ->
                        vertx.setTimer(Math.max(1, serviceMillis), t -> completion(request, buffer.toJsonObject()));
                default -> request.response().setStatusCode(404).end();
            }
        });
    }

    /** vLLM's error answer. */
    private static void error(HttpServerResponse response, int status, String type, String message) {
        response.setStatusCode(status).putHeader("Content-Type", "application/json").end(new JsonObject()
                .put("object", "error").put("message", message).put("type", type).put("code", status).encode());
    }

    /** Whether the request is refused: the chosen failure ({@link #status}), or a model it does not hold. */
    private boolean refused(HttpServerRequest request, JsonObject body) {
        if (status != 200) {
            error(request.response(), status, status == 429 ? "rate_limit_error" : "server_error",
                    "replica says " + status);
            return true;
        }
        String model = body.getString("model");
        if (!BASE.equals(model) && !holding.contains(model)) {
            error(request.response(), 404, "NotFoundError", "The model `" + model + "` does not exist.");
            return true;
        }
        return false;
    }

    private void chat(HttpServerRequest request, JsonObject body) {
        HttpServerResponse response = request.response();
        if (refused(request, body)) {
            return;
        }
        String model = body.getString("model");
        chats.incrementAndGet();
        JsonArray messages = body.getJsonArray("messages");
        String first = "";
        for (int i = 0; i < messages.size(); i++) {
            if ("user".equals(messages.getJsonObject(i).getString("role"))) {
                first = messages.getJsonObject(i).getString("content");
                break;
            }
        }
        conversations.add(first);
        String answer = "from " + name();
        if (!body.getBoolean("stream", false)) {
            response.putHeader("Content-Type", "application/json").end(new JsonObject().put("id", "chatcmpl-replica")
                    .put("object", "chat.completion").put("created", 1_700_000_000L).put("model", model)
                    .put("choices",
                            new JsonArray().add(new JsonObject().put("index", 0)
                                    .put("message", new JsonObject().put("role", "assistant").put("content", answer))
                                    .put("finish_reason", "stop")))
                    .put("usage",
                            new JsonObject().put("prompt_tokens", 5).put("completion_tokens", 3).put("total_tokens", 8))
                    .encode());
            return;
        }
        response.setChunked(true).putHeader("Content-Type", "text/event-stream");
        response.write("data: "
                + OpenAiStub.chunk(model, CREATED, new JsonObject().put("role", "assistant").put("content", ""), null)
                + "\n\n");
        for (String piece : answer.split("(?<= )")) {
            response.write(
                    "data: " + OpenAiStub.chunk(model, CREATED, new JsonObject().put("content", piece), null) + "\n\n");
        }
        response.write("data: " + OpenAiStub.chunk(model, CREATED, new JsonObject(), "stop") + "\n\n");
        response.end("data: [DONE]\n\n");
    }

    /**
     * A completion of a prompt of token ids, with vLLM's extensions as token sampling asks for them
     * ({@code return_tokens_as_token_ids}, {@code logprobs}, {@code prompt_logprobs}, {@code stop_token_ids}). Sample i
     * generates 300 + 10 i, 301 + 10 i, ... with logprobs -(j + 1) / 4 - i / 8, the first of the asked
     * {@code stop_token_ids} as its third token when it is the first sample (stopped there, the token included, vLLM's
     * {@code stop_reason} the token), else until {@code max_tokens}; {@code logprobs: k} adds the k likeliest at each
     * sampled position ({@link #topLogprobs}). The prompt's logprobs at position k: -k / 2 for its own token (rank 5),
     * beside the likeliest token 7 (-1/8, rank 1).
     */
    private void completion(HttpServerRequest request, JsonObject body) {
        completions.add(body);
        if (refused(request, body)) {
            return;
        }
        JsonArray prompt = body.getJsonArray("prompt");
        for (int k = 0; k < prompt.size(); k++) {
            if (prompt.getInteger(k) >= VOCABULARY) {
                error(request.response(), 400, "BadRequestError",
                        "Token id " + prompt.getInteger(k) + " is out of vocabulary");
                return;
            }
        }
        int n = body.getInteger("n", 1);
        int max = body.getInteger("max_tokens", 16);
        JsonArray stops = body.getJsonArray("stop_token_ids", new JsonArray());
        JsonArray choices = new JsonArray();
        int generated = 0;
        for (int i = 0; i < n; i++) {
            JsonArray tokens = new JsonArray();
            JsonArray logprobs = new JsonArray();
            JsonArray top = new JsonArray();
            JsonArray offsets = new JsonArray();
            String finish = "length";
            Object stopReason = null;
            for (int j = 0; j < max; j++) {
                int token = i == 0 && j == 2 && !stops.isEmpty() ? stops.getInteger(0) : 300 + 10 * i + j;
                double logprob = -(j + 1) / 4.0 - i / 8.0;
                tokens.add("token_id:" + token);
                logprobs.add(logprob);
                top.add(topLogprobs(token, logprob, body.getInteger("logprobs", 0)));
                offsets.add(j);
                if (stops.contains(token)) {
                    finish = "stop";
                    stopReason = token;
                    break;
                }
            }
            generated += tokens.size();
            JsonObject choice = new JsonObject().put("index", i).put("text", "x".repeat(tokens.size()))
                    .put("logprobs",
                            new JsonObject().put("text_offset", offsets).put("token_logprobs", logprobs)
                                    .put("tokens", tokens).put("top_logprobs", top))
                    .put("finish_reason", finish).put("stop_reason", stopReason);
            if (body.getValue("prompt_logprobs") != null) {
                JsonArray positions = new JsonArray().addNull();
                for (int k = 1; k < prompt.size(); k++) {
                    // the likeliest token first, then the prompt's own (vLLM adds it to the top ones)
                    positions
                            .add(new JsonObject()
                                    .put("7",
                                            new JsonObject().put("logprob", -0.125).put("rank", 1).put("decoded_token",
                                                    "a"))
                                    .put(String.valueOf(prompt.getInteger(k)), new JsonObject().put("logprob", -k / 2.0)
                                            .put("rank", 5).put("decoded_token", "b")));
                }
                choice.put("prompt_logprobs", positions);
            }
            choices.add(choice);
        }
        request.response().putHeader("Content-Type", "application/json")
                .end(new JsonObject().put("id", "cmpl-replica").put("object", "text_completion").put("created", CREATED)
                        .put("model", body.getString("model")).put("choices", choices)
                        .put("usage", new JsonObject().put("prompt_tokens", prompt.size())
                                .put("completion_tokens", generated).put("total_tokens", prompt.size() + generated))
                        .encode());
    }

    /**
     * vLLM's {@code top_logprobs} of a sampled position for {@code logprobs: k}: the sampled token first, then the k
     * likeliest (the sampled one not twice), where the alternatives are tokens 7, 8, ... with logprobs -1/5, -2/5, ...
     * and the sampled token takes its place among them by its logprob.
     */
    private static JsonObject topLogprobs(int token, double logprob, int k) {
        JsonObject top = new JsonObject().put("token_id:" + token, logprob);
        int alternative = 0;
        boolean placed = false;
        for (int rank = 0; rank < k; rank++) {
            double next = -(alternative + 1) / 5.0;
            if (!placed && logprob > next) {
                placed = true; // the sampled token is this rank
            } else {
                top.put("token_id:" + (7 + alternative), next);
                alternative++;
            }
        }
        return top;
    }

    @Override
    public void close() {
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
