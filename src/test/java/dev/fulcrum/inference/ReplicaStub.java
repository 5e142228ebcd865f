package dev.fulcrum.inference;

import java.util.List;
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
 * {@code /v1/unload_lora_adapter}; 404 for an adapter it does not hold), {@code GET /health}. It answers after a fixed
 * service time (so that it can be the bottleneck), or with a chosen failure ({@link #status}); it can be stopped (its
 * connections close) and started again on the same address and port, forgetting its adapters as a restarted vLLM does.
 * Several listen on one port at different loopback addresses (127.0.0.2, 127.0.0.3, ...), as the pods behind one host
 * name do.
 */
public final class ReplicaStub implements AutoCloseable {

    public static final String BASE = "base-model";
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
     * the local port of some outgoing connection.
     */
    public synchronized void start() {
        holding.clear();
        Exception failed = null;
        for (int attempt = 0; attempt < (port == 0 ? 50 : 1); attempt++) {
            int at = port != 0 ? port : 20_000 + java.util.concurrent.ThreadLocalRandom.current().nextInt(12_000);
            try {
                server = vertx.createHttpServer().requestHandler(this::handle).listen(at, host).toCompletionStage()
                        .toCompletableFuture().get(10, TimeUnit.SECONDS);
                port = server.actualPort();
                return;
            } catch (Exception e) {
                failed = e; // taken: another port
            }
        }
        throw new IllegalStateException(failed);
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
                    String name = buffer.toJsonObject().getString("lora_name");
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
                default -> request.response().setStatusCode(404).end();
            }
        });
    }

    private void chat(HttpServerRequest request, JsonObject body) {
        HttpServerResponse response = request.response();
        if (status != 200) {
            response.setStatusCode(status).putHeader("Content-Type", "application/json")
                    .end(new JsonObject().put("object", "error").put("message", "replica says " + status)
                            .put("type", status == 429 ? "rate_limit_error" : "server_error").put("code", status)
                            .encode());
            return;
        }
        String model = body.getString("model");
        if (!BASE.equals(model) && !holding.contains(model)) {
            response.setStatusCode(404).putHeader("Content-Type", "application/json")
                    .end(new JsonObject().put("object", "error")
                            .put("message", "The model `" + model + "` does not exist.").put("type", "NotFoundError")
                            .put("code", 404).encode());
            return;
        }
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

    @Override
    public void close() {
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
