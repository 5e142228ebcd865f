package dev.fulcrum.support;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.eclipse.microprofile.config.ConfigProvider;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;

/**
 * Slack's Web API as a test sees it (Vert.x, on the port {@link FakeSlackPort} reserved): {@code POST
 * /api/chat.postMessage} records each request and answers by its bearer token, as Slack does, with status 200 and
 * {@code {"ok": true, ...}}, or {@code {"ok": false, "error": ...}} for {@link #REVOKED} ({@code invalid_auth}),
 * {@link #MISSING_CHANNEL} ({@code channel_not_found}) and {@link #OUTSIDE_CHANNEL} ({@code not_in_channel}), or for
 * {@link #LIMITED} a first 429 with {@code Retry-After: 1} ({@code ratelimited}) and then ok. Another path is Slack's
 * {@code unknown_method}.
 */
public final class FakeSlack implements AutoCloseable {

    /** A bot token Slack refuses, as is any token that begins with it. */
    public static final String REVOKED = "xoxb-revoked";
    /** A bot token whose first post is rate-limited. */
    public static final String LIMITED = "xoxb-limited";
    /** A channel Slack does not know ({@code channel_not_found}). */
    public static final String MISSING_CHANNEL = "no-such-channel";
    /** A channel the bot is not in ({@code not_in_channel}); the answer echoes the request's Authorization header. */
    public static final String OUTSIDE_CHANNEL = "not-joined";

    /** A request Slack received: its bearer token, content type and JSON body. */
    public record Posted(String path, String authorization, String contentType, JsonObject body) {
    }

    private final Vertx vertx = Vertx.vertx();
    private final HttpServer server;
    private final List<Posted> posted = new CopyOnWriteArrayList<>();
    private final Map<String, AtomicInteger> byToken = new ConcurrentHashMap<>();

    public FakeSlack() {
        this(ConfigProvider.getConfig().getValue(FakeSlackPort.PORT_PROPERTY, Integer.class));
    }

    /** On {@code port} of 127.0.0.1 (for an application started outside the test's Quarkus). */
    public FakeSlack(int port) {
        server = vertx.createHttpServer().requestHandler(this::handle);
        try {
            server.listen(port, "127.0.0.1").toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private void handle(HttpServerRequest request) {
        request.body().onSuccess(buffer -> {
            String authorization = request.getHeader("Authorization");
            JsonObject body = buffer.length() == 0 ? new JsonObject() : buffer.toJsonObject();
            posted.add(new Posted(request.path(), authorization, request.getHeader("Content-Type"), body));
            var response = request.response().putHeader("Content-Type", "application/json; charset=utf-8");
            if (!request.path().equals("/api/chat.postMessage")) {
                response.end(new JsonObject().put("ok", false).put("error", "unknown_method").encode());
                return;
            }
            String token = authorization == null ? "" : authorization.replaceFirst("^Bearer ", "");
            int seen = byToken.computeIfAbsent(token, t -> new AtomicInteger()).getAndIncrement();
            String channel = body.getString("channel", "");
            if (token.startsWith(REVOKED)) {
                response.end(new JsonObject().put("ok", false).put("error", "invalid_auth").encode());
            } else if (channel.equals(MISSING_CHANNEL)) {
                response.end(new JsonObject().put("ok", false).put("error", "channel_not_found").encode());
            } else if (channel.equals(OUTSIDE_CHANNEL)) {
                // the request's credentials echoed back: what answers show must not reveal them
                response.end(new JsonObject().put("ok", false).put("error", "not_in_channel").put("echo", authorization)
                        .encode());
            } else if (token.equals(LIMITED) && seen == 0) {
                response.setStatusCode(429).putHeader("Retry-After", "1")
                        .end(new JsonObject().put("ok", false).put("error", "ratelimited").encode());
            } else {
                response.end(new JsonObject().put("ok", true).put("channel", body.getString("channel"))
                        .put("ts", "1700000000." + (100000 + seen)).encode());
            }
        });
    }

    /** What was posted so far. */
    public List<Posted> posted() {
        return List.copyOf(posted);
    }

    /** Waits (up to 30 s) until {@code count} requests were posted with {@code token}; them. */
    public List<Posted> await(String token, int count) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            List<Posted> found = posted.stream().filter(p -> ("Bearer " + token).equals(p.authorization())).toList();
            if (found.size() >= count) {
                return found;
            }
            if (System.nanoTime() > end) {
                throw new AssertionError(
                        "Slack got " + found.size() + " of " + count + " posts with the token; all: " + posted);
            }
            Thread.sleep(50);
        }
    }

    @Override
    public void close() {
        server.close().toCompletionStage().toCompletableFuture().orTimeout(10, TimeUnit.SECONDS).join();
        vertx.close();
    }
}
