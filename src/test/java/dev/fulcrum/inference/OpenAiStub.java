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

import dev.fulcrum.inference.gateway.Responses;

/**
 * A real OpenAI-compatible model server for tests (Vert.x, on a free port). What it does depends on the upstream model
 * name it is asked for: {@code echo} answers "Hello from upstream" (plain or streamed, with usage when asked),
 * {@code no-usage} the same without usage, {@code bad-request} a 400, {@code server-error} a 500, {@code rate-limited}
 * a 429, {@code slow} never, {@code endless} streams a chunk every 20 ms until the client goes away, {@code trickle}
 * streams the answer's pieces 400 ms apart and then ends (about 1.6 s), {@code held} waits until {@link #release()}.
 * Beside chat completions: {@code /v1/completions} answers {@code echo} with the text "Hello from upstream" (plain or
 * streamed); {@code /v1/embeddings} answers {@code echo} with the vector {@code [index, 0.5]} per input;
 * {@code /v1/responses} answers {@code responder} only (a server with the Responses API, plain or streamed) and is a
 * bare 404 for every other model, as a server without the API answers ({@code responder} answers chat completions as
 * {@code echo} does).
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
    /** The path of each request, in order. */
    public final List<String> paths = new CopyOnWriteArrayList<>();
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
        if (request.path().equals("/v1/completions") || request.path().equals("/v1/embeddings")
                || request.path().equals("/v1/responses")) {
            request.body().onSuccess(buffer -> {
                JsonObject body = buffer.toJsonObject();
                requests.add(body);
                authorizations.add(String.valueOf(request.getHeader("Authorization")));
                paths.add(request.path());
                boolean known = request.path().equals("/v1/responses") ? "responder".equals(body.getString("model"))
                        : "echo".equals(body.getString("model"));
                if (!known) {
                    request.response().setStatusCode(404).end();
                } else if (request.path().equals("/v1/completions")) {
                    textCompletion(request, body);
                } else if (request.path().equals("/v1/embeddings")) {
                    embeddings(request, body);
                } else {
                    responses(request, body);
                }
            });
            return;
        }
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
            paths.add(request.path());
            switch (model) {
                case "echo", "no-usage", "responder" ->
                        answer(request, model, stream, usage && !model.equals("no-usage"));
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

    private void textCompletion(HttpServerRequest request, JsonObject body) {
        if (!body.getBoolean("stream", false)) {
            request.response().putHeader("Content-Type", "application/json")
                    .end(new JsonObject().put("id", "cmpl-stub").put("object", "text_completion")
                            .put("created", 1_700_000_000L).put("model", "echo")
                            .put("choices",
                                    new JsonArray().add(new JsonObject().put("text", ANSWER).put("index", 0)
                                            .putNull("logprobs").put("finish_reason", "stop")))
                            .put("usage", usage(4, 5)).encode());
            return;
        }
        var response = request.response().setChunked(true).putHeader("Content-Type", "text/event-stream");
        for (int i = 0; i <= PIECES.size(); i++) {
            JsonObject choice = new JsonObject().put("text", i < PIECES.size() ? PIECES.get(i) : "").put("index", 0)
                    .putNull("logprobs").put("finish_reason", i < PIECES.size() ? null : "stop");
            response.write("data: " + new JsonObject().put("id", "cmpl-stub").put("object", "text_completion")
                    .put("created", 1_700_000_000L).put("model", "echo").put("choices", new JsonArray().add(choice))
                    .encode() + "\n\n");
        }
        if (body.getJsonObject("stream_options", new JsonObject()).getBoolean("include_usage", false)) {
            response.write("data: " + new JsonObject().put("id", "cmpl-stub").put("object", "text_completion")
                    .put("created", 1_700_000_000L).put("model", "echo").put("choices", new JsonArray())
                    .put("usage", usage(4, 3)).encode() + "\n\n");
        }
        response.end("data: [DONE]\n\n");
    }

    private void embeddings(HttpServerRequest request, JsonObject body) {
        Object input = body.getValue("input");
        int count = input instanceof JsonArray array ? array.size() : 1;
        JsonArray data = new JsonArray();
        for (int i = 0; i < count; i++) {
            data.add(new JsonObject().put("object", "embedding").put("index", i).put("embedding",
                    new JsonArray().add((double) i).add(0.5)));
        }
        request.response().putHeader("Content-Type", "application/json")
                .end(new JsonObject().put("object", "list").put("data", data).put("model", "echo")
                        .put("usage", new JsonObject().put("prompt_tokens", 3 * count).put("total_tokens", 3 * count))
                        .encode());
    }

    private static JsonObject response(String status, String text) {
        JsonArray content = new JsonArray();
        JsonArray output = new JsonArray();
        if (text != null) {
            content.add(
                    new JsonObject().put("type", "output_text").put("text", text).put("annotations", new JsonArray()));
            output.add(new JsonObject().put("type", "message").put("id", "msg_stub").put("status", "completed")
                    .put("role", "assistant").put("content", content));
        }
        return new JsonObject().put("id", "resp_stub").put("object", "response").put("created_at", 1_700_000_000L)
                .put("status", status).put("model", "responder").put("output", output).put("usage", text == null ? null
                        : new JsonObject().put("input_tokens", 7).put("output_tokens", 3).put("total_tokens", 10));
    }

    private void responses(HttpServerRequest request, JsonObject body) {
        if (!body.getBoolean("stream", false)) {
            request.response().putHeader("Content-Type", "application/json")
                    .end(response("completed", ANSWER).encode());
            return;
        }
        var response = request.response().setChunked(true).putHeader("Content-Type", "text/event-stream");
        int sequence = 0;
        response.write(
                sse("response.created", sequence++, new JsonObject().put("response", response("in_progress", null))));
        JsonObject item = new JsonObject().put("type", "message").put("id", "msg_stub").put("status", "in_progress")
                .put("role", "assistant").put("content", new JsonArray());
        response.write(sse("response.output_item.added", sequence++,
                new JsonObject().put("output_index", 0).put("item", item)));
        JsonObject part = new JsonObject().put("type", "output_text").put("text", "").put("annotations",
                new JsonArray());
        response.write(sse("response.content_part.added", sequence++, new JsonObject().put("item_id", "msg_stub")
                .put("output_index", 0).put("content_index", 0).put("part", part)));
        for (String piece : PIECES) {
            response.write(sse("response.output_text.delta", sequence++, new JsonObject().put("item_id", "msg_stub")
                    .put("output_index", 0).put("content_index", 0).put("delta", piece)));
        }
        response.end(
                sse("response.completed", sequence, new JsonObject().put("response", response("completed", ANSWER))));
    }

    private static String sse(String type, int sequence, JsonObject data) {
        JsonObject event = new JsonObject().put("type", type).put("sequence_number", sequence);
        event.getMap().putAll(data.getMap());
        return "event: " + type + "\ndata: " + event.encode() + "\n\n";
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

    static String chunk(String model, long created, JsonObject delta, String finish) {
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
