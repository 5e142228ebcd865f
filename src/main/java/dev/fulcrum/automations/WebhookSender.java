package dev.fulcrum.automations;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.SocketAddress;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.http.OutboundHttp;

/**
 * Sends one webhook request (a JSON {@code POST}) without blocking a thread while it is under way: the SSRF guard
 * resolves and checks the host (on a small resolver pool, since name lookups block), then the non-blocking Vert.x
 * client connects to the checked address while the Host header and the TLS server name stay those of the URL. Redirects
 * are not followed; only a 2xx answer is a success.
 * <p>
 * Headers: {@code Content-Type: application/json}, {@code User-Agent: Fulcrum-Webhooks/<version>}, {@code webhook-id},
 * {@code webhook-timestamp} (Unix seconds), {@code Authorization: Bearer <token>} with an access token, and with a
 * signing secret {@code X-Service-Signature} (lowercase hex HMAC-SHA256 of the body bytes, keyed with the secret's
 * UTF-8 bytes) and the Standard Webhooks {@code webhook-signature} ({@code v1,} + base64 HMAC-SHA256 of
 * {@code id.timestamp.body}, keyed with the base64-decoded rest of a {@code whsec_} secret, otherwise with the secret's
 * UTF-8 bytes), and the W3C {@code traceparent} of the attempt's span (each attempt is a client span; signatures cover
 * the id, timestamp and body, never other headers). The URL's path and query stay out of the span, since they may carry
 * credentials.
 */
@ApplicationScoped
public class WebhookSender {

    static final String USER_AGENT_PREFIX = "Fulcrum-Webhooks/";
    static final String STANDARD_SECRET_PREFIX = "whsec_";
    /** How the error of an outcome the SSRF guard refused begins. */
    static final String REFUSED = "Refused: ";

    @Inject
    Vertx vertx;

    @Inject
    OutboundHttp http;

    @Inject
    WebhooksConfig config;

    @Inject
    SsrfGuard guard;

    @Inject
    WebhookMetrics metrics;

    @Inject
    Tracer tracer;

    @Inject
    OpenTelemetry telemetry;

    @ConfigProperty(name = "quarkus.application.version", defaultValue = "0.1.0")
    String version;

    private HttpClient client;
    private ExecutorService resolvers;

    /**
     * A request to send. {@code accessToken} and {@code signingSecret} are null when not configured. {@code slack}: a
     * post to Slack's {@code chat.postMessage} ({@link #slack}).
     */
    public record Outgoing(String messageId, String url, String body, String accessToken, String signingSecret,
            boolean slack) {

        public Outgoing(String messageId, String url, String body, String accessToken, String signingSecret) {
            this(messageId, url, body, accessToken, signingSecret, false);
        }

        /**
         * A Slack notification: the bot token as the bearer token, no signature and no {@code webhook-*} headers, and
         * Slack's answer decides ({@code "ok": false} is a failure although the status is 200).
         */
        static Outgoing slack(String messageId, String url, String body, String botToken) {
            return new Outgoing(messageId, url, body, botToken, null, true);
        }

        @Override
        public String toString() {
            return "Outgoing[" + messageId + " to " + url + "]";
        }
    }

    /**
     * What happened: the endpoint's status, headers and (truncated) body, or, when no answer came, the error. The
     * latency covers resolving, connecting and the answer. {@code retryAfter} is the endpoint's {@code Retry-After}.
     */
    public record Outcome(Integer status, Map<String, String> headers, String body, boolean bodyTruncated,
            long latencyMs, String error, Duration retryAfter, boolean permanent) {

        public Outcome(Integer status, Map<String, String> headers, String body, boolean bodyTruncated, long latencyMs,
                String error, Duration retryAfter) {
            this(status, headers, body, bodyTruncated, latencyMs, error, retryAfter, false);
        }

        /** A 2xx answer that is not a refusal (Slack answers its refusals with 200 and an {@code error}). */
        public boolean succeeded() {
            return status != null && status >= 200 && status < 300 && error == null;
        }

        static Outcome failure(String error, long latencyMs) {
            return new Outcome(null, Map.of(), null, false, latencyMs, error, null);
        }

        /** This outcome with the secrets {@code mask} knows replaced in its headers, body and error. */
        Outcome masked(SecretMask mask) {
            return new Outcome(status, mask.apply(headers), mask.apply(body, bodyTruncated), bodyTruncated, latencyMs,
                    mask.apply(error, false), retryAfter, permanent);
        }
    }

    @PostConstruct
    void start() {
        // the attempt's span is Fulcrum's own (below), with the traceparent it sends
        client = http.client(config.connectTimeout(),
                new PoolOptions().setHttp1MaxSize(config.maxConnectionsPerEndpoint()), OutboundHttp.Spans.CALLER);
        AtomicInteger threads = new AtomicInteger();
        resolvers = Executors.newFixedThreadPool(8, runnable -> {
            Thread thread = new Thread(runnable, "webhook-resolver-" + threads.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
    }

    @PreDestroy
    void stop() {
        resolvers.shutdownNow();
        http.close(client);
    }

    /**
     * Sends the request and waits for its outcome, for a test a caller waits on; {@code endpoint} names the other side
     * in the 503 an interrupted wait answers.
     */
    public Outcome await(Outgoing outgoing, String endpoint) {
        try {
            return send(outgoing).toCompletableFuture().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("Interrupted while waiting for " + endpoint);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Sending " + outgoing + " failed", e.getCause());
        }
    }

    /** Sends the request; the stage always completes normally, with the outcome. */
    public CompletionStage<Outcome> send(Outgoing outgoing) {
        long start = System.nanoTime();
        Span span = tracer.spanBuilder("POST webhook").setSpanKind(SpanKind.CLIENT)
                .setAttribute("http.request.method", "POST").setAttribute("webhook.id", outgoing.messageId())
                .startSpan();
        return CompletableFuture.supplyAsync(() -> {
            try {
                return guard.resolve(outgoing.url());
            } catch (SsrfGuard.Refused e) {
                throw new RefusedTarget(e.getMessage());
            }
        }, resolvers).thenCompose(target -> send(target, outgoing, start, span)).exceptionally(e -> {
            Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null
                    ? e.getCause()
                    : e;
            String error = cause instanceof RefusedTarget ? REFUSED + cause.getMessage() : describe(cause);
            return Outcome.failure(error, millisSince(start));
        }).thenApply(outcome -> {
            ended(span, outcome);
            metrics.attempted(outcome);
            return outcome;
        });
    }

    private static void ended(Span span, Outcome outcome) {
        if (outcome.status() != null) {
            span.setAttribute(AttributeKey.longKey("http.response.status_code"), outcome.status());
        }
        if (!outcome.succeeded()) {
            span.setStatus(StatusCode.ERROR,
                    outcome.status() != null ? "status " + outcome.status() : String.valueOf(outcome.error()));
        }
        span.end();
    }

    private CompletionStage<Outcome> send(SsrfGuard.Target target, Outgoing outgoing, long start, Span span) {
        byte[] body = outgoing.body().getBytes(StandardCharsets.UTF_8);
        RequestOptions options = new RequestOptions().setMethod(HttpMethod.POST)
                .setServer(SocketAddress.inetSocketAddress(new InetSocketAddress(target.address(), target.port())))
                .setHost(target.host()).setPort(target.port()).setSsl(target.tls()).setURI(target.requestUri())
                .setFollowRedirects(false).setConnectTimeout(config.connectTimeout().toMillis());
        headers(outgoing, body).forEach(options::putHeader);
        span.setAttribute("server.address", target.host()).setAttribute(AttributeKey.longKey("server.port"),
                target.port());
        telemetry.getPropagators().getTextMapPropagator().inject(Context.root().with(span), options,
                RequestOptions::putHeader);

        Promise<Outcome> result = Promise.promise();
        AtomicReference<HttpClientRequest> current = new AtomicReference<>();
        long timeout = config.requestTimeout().toMillis();
        long timer = vertx.setTimer(timeout, id -> {
            if (result.tryComplete(Outcome.failure("Timed out after " + timeout + " ms", millisSince(start)))) {
                HttpClientRequest request = current.get();
                if (request != null) {
                    request.reset(0, new TimeoutException());
                }
            }
        });
        client.request(options).onComplete(connected -> {
            if (connected.failed()) {
                result.tryComplete(Outcome.failure(describe(connected.cause()), millisSince(start)));
                return;
            }
            HttpClientRequest request = connected.result();
            request.exceptionHandler(e -> result.tryComplete(Outcome.failure(describe(e), millisSince(start))));
            current.set(request);
            if (result.future().isComplete()) {
                request.reset(0, new TimeoutException());
                return;
            }
            request.send(Buffer.buffer(body)).onComplete(answered -> {
                if (answered.failed()) {
                    result.tryComplete(Outcome.failure(describe(answered.cause()), millisSince(start)));
                } else {
                    read(answered.result(), result, start, outgoing.slack());
                }
            });
        });
        return result.future().onComplete(done -> vertx.cancelTimer(timer)).toCompletionStage();
    }

    /** Reads at most the configured number of body bytes and drops the rest. */
    private void read(HttpClientResponse response, Promise<Outcome> result, long start, boolean slack) {
        int limit = config.maxResponseBodyBytes();
        Buffer kept = Buffer.buffer();
        boolean[] truncated = { false };
        response.handler(chunk -> {
            int room = limit - kept.length();
            if (chunk.length() <= room) {
                kept.appendBuffer(chunk);
            } else {
                if (room > 0) {
                    kept.appendBuffer(chunk, 0, room);
                }
                truncated[0] = true;
            }
        });
        response.exceptionHandler(e -> result.tryComplete(Outcome.failure(describe(e), millisSince(start))));
        response.endHandler(end -> {
            Map<String, String> headers = new LinkedHashMap<>();
            response.headers().forEach(header -> headers.merge(header.getKey().toLowerCase(java.util.Locale.ROOT),
                    header.getValue(), (a, b) -> a + ", " + b));
            Outcome outcome = new Outcome(response.statusCode(), headers, text(kept), truncated[0], millisSince(start),
                    null, retryAfter(response.getHeader("Retry-After")));
            result.tryComplete(slack ? slackOutcome(outcome) : outcome);
        });
    }

    /** Slack's errors worth another attempt; any other {@code "ok": false} would be answered again. */
    private static final Set<String> SLACK_TRANSIENT = Set.of("ratelimited", "rate_limited", "internal_error",
            "fatal_error", "service_unavailable", "request_timeout");
    private static final ObjectMapper SLACK_JSON = new ObjectMapper();

    /**
     * A 2xx answer of Slack's Web API as the outcome it is: {@code "ok": true} a success, {@code "ok": false} a failure
     * with Slack's {@code error} (not retried unless transient: {@code ratelimited}, {@code internal_error} ...), a
     * body that is not Slack's a failure retried. Other statuses (429 with {@code Retry-After}, 5xx) are a webhook's.
     */
    static Outcome slackOutcome(Outcome answer) {
        if (!answer.succeeded()) {
            return answer;
        }
        String error;
        boolean permanent;
        try {
            JsonNode body = SLACK_JSON.readTree(answer.body() == null ? "" : answer.body());
            if (body != null && body.path("ok").asBoolean(false)) {
                return answer;
            }
            String code = body == null ? null : body.path("error").asText(null);
            error = code == null ? "Slack did not answer ok" : "Slack answered ok=false: " + code;
            permanent = code != null && !SLACK_TRANSIENT.contains(code);
        } catch (IOException e) {
            error = "Slack's answer is not JSON";
            permanent = false;
        }
        return new Outcome(answer.status(), answer.headers(), answer.body(), answer.bodyTruncated(), answer.latencyMs(),
                error, answer.retryAfter(), permanent);
    }

    /** The headers of the request, signatures computed over exactly {@code body}. */
    Map<String, String> headers(Outgoing outgoing, byte[] body) {
        Map<String, String> headers = new LinkedHashMap<>();
        String timestamp = Long.toString(System.currentTimeMillis() / 1000);
        if (outgoing.slack()) {
            headers.put("Content-Type", "application/json; charset=utf-8");
            headers.put("User-Agent", USER_AGENT_PREFIX + version);
            headers.put("Authorization", "Bearer " + outgoing.accessToken());
            return headers;
        }
        headers.put("Content-Type", "application/json");
        headers.put("User-Agent", USER_AGENT_PREFIX + version);
        headers.put("webhook-id", outgoing.messageId());
        headers.put("webhook-timestamp", timestamp);
        if (outgoing.accessToken() != null) {
            headers.put("Authorization", "Bearer " + outgoing.accessToken());
        }
        if (outgoing.signingSecret() != null) {
            headers.put("X-Service-Signature",
                    HexFormat.of().formatHex(hmac(outgoing.signingSecret().getBytes(StandardCharsets.UTF_8), body)));
            byte[] signed = (outgoing.messageId() + "." + timestamp + ".").getBytes(StandardCharsets.UTF_8);
            byte[] content = new byte[signed.length + body.length];
            System.arraycopy(signed, 0, content, 0, signed.length);
            System.arraycopy(body, 0, content, signed.length, body.length);
            headers.put("webhook-signature",
                    "v1," + Base64.getEncoder().encodeToString(hmac(standardKey(outgoing.signingSecret()), content)));
        }
        return headers;
    }

    /** The Standard Webhooks signing key: base64 after {@code whsec_}, otherwise the secret's UTF-8 bytes. */
    static byte[] standardKey(String secret) {
        if (secret.startsWith(STANDARD_SECRET_PREFIX)) {
            try {
                return Base64.getDecoder().decode(secret.substring(STANDARD_SECRET_PREFIX.length()));
            } catch (IllegalArgumentException e) {
                return secret.getBytes(StandardCharsets.UTF_8);
            }
        }
        return secret.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] hmac(byte[] key, byte[] content) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key.length == 0 ? new byte[1] : key, "HmacSHA256"));
            return mac.doFinal(content);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is unavailable", e);
        }
    }

    /** {@code Retry-After} as seconds or an HTTP date; null when absent or unreadable. */
    static Duration retryAfter(String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.strip();
        try {
            return Duration.ofSeconds(Math.max(0, Long.parseLong(v)));
        } catch (NumberFormatException e) {
            try {
                Duration until = Duration.between(ZonedDateTime.now(),
                        ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME));
                return until.isNegative() ? Duration.ZERO : until;
            } catch (DateTimeParseException notDate) {
                return null;
            }
        }
    }

    private static String text(Buffer buffer) {
        // a cut in the middle of a UTF-8 sequence becomes one replacement character
        return new String(buffer.getBytes(), StandardCharsets.UTF_8);
    }

    static String describe(Throwable e) {
        String name = e.getClass().getSimpleName();
        String message = e.getMessage();
        if (e instanceof java.net.ConnectException || name.contains("Connect")) {
            return "Connection failed: " + (message == null ? name : message);
        }
        if (e instanceof javax.net.ssl.SSLException || name.contains("Ssl") || name.contains("SSL")) {
            return "TLS failed: " + (message == null ? name : message);
        }
        if (e instanceof TimeoutException || name.contains("Timeout")) {
            return "Timed out: " + (message == null ? name : message);
        }
        return name + (message == null ? "" : ": " + message);
    }

    private static long millisSince(long start) {
        return (System.nanoTime() - start) / 1_000_000;
    }

    /** An endpoint the guard refused, carried through the future. */
    private static final class RefusedTarget extends RuntimeException {
        RefusedTarget(String message) {
            super(message, null, false, false);
        }
    }
}
