package dev.fulcrum.inference;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * A real OpenAI-compatible model server for tests (Vert.x, on a free port). What it does depends on the upstream model
 * name it is asked for: {@code echo} answers "Hello from upstream" (plain or streamed, with usage when asked),
 * {@code no-usage} the same without usage, {@code bad-request} a 400, {@code server-error} a 500, {@code rate-limited}
 * a 429, {@code slow} never, {@code endless} streams a chunk every 20 ms until the client goes away, {@code trickle}
 * streams the answer's pieces 400 ms apart and then ends (about 1.6 s), {@code held} waits until {@link #release()}.
 */
public final class OpenAiStub implements AutoCloseable {

    public static final String ANSWER = "Hello from upstream";
    public static final List<String> PIECES = List.of("Hello", " from", " upstream");

    private final Vertx vertx = Vertx.vertx();
    private final HttpServer server;
    public final List<JsonObject> requests = new CopyOnWriteArrayList<>();
    public final List<String> authorizations = new CopyOnWriteArrayList<>();
    /** The {@code traceparent} header of each request ("null" when it had none). */
    public final List<String> traceparents = new CopyOnWriteArrayList<>();
    public final AtomicInteger held = new AtomicInteger();
    public volatile CountDownLatch closedConnections = new CountDownLatch(1);
    private final List<HttpServerRequest> waiting = new CopyOnWriteArrayList<>();

    public OpenAiStub() {
        server = vertx.createHttpServer().requestHandler(this::handle);
        try {
            server.listen(0, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + server.actualPort() + "/v1";
    }

    public JsonObject lastRequest() {
        return requests.get(requests.size() - 1);
    }

    /** Answers every held request. */
    public void release() {
        for (HttpServerRequest request : waiting) {
            vertx.runOnContext(v -> request.response().putHeader("Content-Type", "application/json")
                    .end(completion("held", false).encode()));
        }
        waiting.clear();
    }

    private void handle(HttpServerRequest request) {
        if (!request.path().equals("/v1/chat/completions")) {
            request.response().setStatusCode(404).end();
            return;
        }
        request.body().onSuccess(buffer -> {
            JsonObject body = buffer.toJsonObject();
            requests.add(body);
            authorizations.add(String.valueOf(request.getHeader("Authorization")));
            traceparents.add(String.valueOf(request.getHeader("traceparent")));
            String model = body.getString("model");
            boolean stream = body.getBoolean("stream", false);
            boolean usage = body.getJsonObject("stream_options", new JsonObject()).getBoolean("include_usage", false);
            switch (model) {
                case "echo", "no-usage" -> answer(request, model, stream, usage && model.equals("echo"));
                case "bad-request" -> request.response().setStatusCode(400)
                        .putHeader("Content-Type", "application/json")
                        .end(new JsonObject().put("error", new JsonObject().put("message", "Upstream says no")
                                .put("type", "invalid_request_error").put("param", "temperature").putNull("code"))
                                .encode());
                case "server-error" -> request.response().setStatusCode(500).end("upstream broke");
                case "rate-limited" ->
                        request.response().setStatusCode(429).putHeader("Retry-After", "1")
                                .putHeader("Content-Type", "application/json")
                                .end(new JsonObject().put("error",
                                        new JsonObject().put("message", "Slow down").put("type", "rate_limit_error"))
                                        .encode());
                case "slow" -> {
                }
                case "endless" -> endless(request);
                case "trickle" -> trickle(request);
                case "held" -> {
                    held.incrementAndGet();
                    waiting.add(request);
                }
                default -> request.response().setStatusCode(404).putHeader("Content-Type", "application/json").end(
                        new JsonObject().put("error", new JsonObject().put("message", "no model " + model)).encode());
            }
        });
    }

    private void answer(HttpServerRequest request, String model, boolean stream, boolean usage) {
        if (!stream) {
            request.response().putHeader("Content-Type", "application/json")
                    .end(completion(model, model.equals("echo")).encode());
            return;
        }
        var response = request.response().setChunked(true).putHeader("Content-Type", "text/event-stream");
        long created = 1_700_000_000L;
        response.write("data: "
                + chunk(model, created, new JsonObject().put("role", "assistant").put("content", ""), null) + "\n\n");
        for (String piece : PIECES) {
            response.write("data: " + chunk(model, created, new JsonObject().put("content", piece), null) + "\n\n");
        }
        response.write("data: " + chunk(model, created, new JsonObject(), "stop") + "\n\n");
        if (usage) {
            response.write("data: " + new JsonObject().put("id", "chatcmpl-stub").put("object", "chat.completion.chunk")
                    .put("created", created).put("model", model).put("choices", new JsonArray())
                    .put("usage", usage(11, 3)).encode() + "\n\n");
        }
        response.end("data: [DONE]\n\n");
    }

    private void endless(HttpServerRequest request) {
        var response = request.response().setChunked(true).putHeader("Content-Type", "text/event-stream");
        CountDownLatch closed = closedConnections;
        long timer = vertx.setPeriodic(20, id -> {
            if (!response.ended() && !response.closed()) {
                response.write("data: " + chunk("endless", 1L, new JsonObject().put("content", "x"), null) + "\n\n");
            }
        });
        request.connection().closeHandler(v -> {
            vertx.cancelTimer(timer);
            closed.countDown();
        });
    }

    private void trickle(HttpServerRequest request) {
        var response = request.response().setChunked(true).putHeader("Content-Type", "text/event-stream");
        response.write("data: "
                + chunk("trickle", 1L, new JsonObject().put("role", "assistant").put("content", ""), null) + "\n\n");
        for (int i = 0; i <= PIECES.size(); i++) {
            int piece = i;
            vertx.setTimer(400L * (i + 1), id -> {
                if (response.ended() || response.closed()) {
                    return;
                }
                if (piece < PIECES.size()) {
                    response.write("data: "
                            + chunk("trickle", 1L, new JsonObject().put("content", PIECES.get(piece)), null) + "\n\n");
                } else {
                    response.write("data: " + chunk("trickle", 1L, new JsonObject(), "stop") + "\n\n");
                    response.end("data: [DONE]\n\n");
                }
            });
        }
    }

    private static JsonObject usage(int prompt, int completion) {
        return new JsonObject().put("prompt_tokens", prompt).put("completion_tokens", completion).put("total_tokens",
                prompt + completion);
    }

    private static JsonObject completion(String model, boolean withUsage) {
        JsonObject completion = new JsonObject().put("id", "chatcmpl-stub").put("object", "chat.completion")
                .put("created", 1_700_000_000L).put("model", model).put("choices",
                        new JsonArray().add(new JsonObject().put("index", 0)
                                .put("message", new JsonObject().put("role", "assistant").put("content", ANSWER))
                                .put("finish_reason", "stop")));
        if (withUsage) {
            completion.put("usage", usage(11, 5));
        }
        return completion;
    }

    private static String chunk(String model, long created, JsonObject delta, String finish) {
        return new JsonObject().put("id", "chatcmpl-stub").put("object", "chat.completion.chunk")
                .put("created", created).put("model", model)
                .put("choices",
                        new JsonArray()
                                .add(new JsonObject().put("index", 0).put("delta", delta).put("finish_reason", finish)))
                .encode();
    }

    @Override
    public void close() {
        CompletableFuture<Void> done = vertx.close().toCompletionStage().toCompletableFuture();
        try {
            done.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
