package dev.fulcrum.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.awaitility.Awaitility;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpServer;

/**
 * A real HTTP endpoint for webhook and automation tests, on 127.0.0.1 and a free port. Every request is recorded; each
 * path answers with the responses queued for it (the last one repeats), otherwise with the receiver's default answer
 * (200 {@code answer 200} unless given). Signatures are checked with its own HMAC code, not the sender's.
 */
public final class WebhookReceiver implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** A request as received. */
    public record Received(String method, String path, Headers headers, byte[] body, long receivedAtMillis) {
        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        public String header(String name) {
            return headers.getFirst(name);
        }

        public JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("The body is not JSON: " + text(), e);
            }
        }

        /** Whether {@code X-Service-Signature} is the lowercase hex HMAC-SHA256 of the body under {@code secret}. */
        public boolean signedWith(String secret) {
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
                return HexFormat.of().formatHex(mac.doFinal(body)).equals(header("X-Service-Signature"));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        @Override
        public String toString() {
            return method + " " + path + " " + text();
        }
    }

    /** An answer: status, headers, body, and how long to wait before answering. */
    public record Answer(int status, Map<String, String> headers, String body, long delayMillis) {
        public static Answer status(int status) {
            return new Answer(status, Map.of(), "answer " + status, 0);
        }

        /** The status alone, without a body. */
        public static Answer empty(int status) {
            return new Answer(status, Map.of(), "", 0);
        }

        /**
         * 200 with the request echoed, as a careless endpoint would: the body is the request body followed by a line
         * {@code authorization: <Authorization header>}, and the header {@code X-Echo-Authorization} repeats it.
         */
        public static Answer echo() {
            return ECHO;
        }
    }

    private static final Answer ECHO = new Answer(200, Map.of(), "", 0);
    private static final Duration WITHIN = Duration.ofSeconds(30);

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final Map<String, List<Answer>> answers = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> served = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> underWay = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> mostUnderWay = new ConcurrentHashMap<>();
    private final Answer byDefault;

    public WebhookReceiver() throws IOException {
        this(Answer.status(200));
    }

    /** A receiver answering every path with {@code byDefault} unless answers are queued for it. */
    public WebhookReceiver(Answer byDefault) throws IOException {
        this.byDefault = byDefault;
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.setExecutor(executor);
        server.createContext("/", exchange -> {
            try (InputStream in = exchange.getRequestBody()) {
                String path = exchange.getRequestURI().getPath();
                Received request = new Received(exchange.getRequestMethod(), path, exchange.getRequestHeaders(),
                        in.readAllBytes(), System.currentTimeMillis());
                received.add(request);
                AtomicInteger now = underWay.computeIfAbsent(path, p -> new AtomicInteger());
                mostUnderWay.computeIfAbsent(path, p -> new AtomicInteger()).accumulateAndGet(now.incrementAndGet(),
                        Math::max);
                List<Answer> queued = answers.getOrDefault(path, List.of(this.byDefault));
                int n = served.computeIfAbsent(path, p -> new AtomicInteger()).getAndIncrement();
                Answer answer = queued.get(Math.min(n, queued.size() - 1));
                if (answer.delayMillis() > 0) {
                    // a slow endpoint (timeouts, leases) is what the answer asks for, not a wait
                    Thread.sleep(answer.delayMillis());
                }
                answer.headers().forEach(exchange.getResponseHeaders()::add);
                byte[] body = answer.body().getBytes(StandardCharsets.UTF_8);
                if (answer == ECHO) {
                    String authorization = String.valueOf(request.header("Authorization"));
                    exchange.getResponseHeaders().add("X-Echo-Authorization", authorization);
                    body = (request.text() + "\nauthorization: " + authorization).getBytes(StandardCharsets.UTF_8);
                }
                now.decrementAndGet();
                exchange.sendResponseHeaders(answer.status(), body.length == 0 ? -1 : body.length);
                if (body.length > 0) {
                    try (OutputStream out = exchange.getResponseBody()) {
                        out.write(body);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                exchange.close();
            }
        });
        server.start();
    }

    /** The answers of a path, in order; the last one repeats. */
    public WebhookReceiver answer(String path, Answer... queued) {
        answers.put(path, List.of(queued));
        served.remove(path);
        return this;
    }

    public String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** Every request so far, in order. */
    public List<Received> received() {
        return List.copyOf(received);
    }

    /** The most requests to {@code path} that were being answered at one moment. */
    public int mostUnderWay(String path) {
        AtomicInteger most = mostUnderWay.get(path);
        return most == null ? 0 : most.get();
    }

    /** The requests to a path so far, in order. */
    public List<Received> received(String path) {
        return received.stream().filter(r -> r.path().equals(path)).toList();
    }

    /** The first request matching {@code wanted}, waiting for it up to 30 s. */
    public Received await(Predicate<Received> wanted) {
        List<Received> seen = Awaitility.await("a matching request").atMost(WITHIN).until(this::received,
                all -> all.stream().anyMatch(wanted));
        return seen.stream().filter(wanted).findFirst().orElseThrow();
    }

    /** The first request to a path, waiting for it up to 30 s. */
    public Received awaitAt(String path) {
        return await(r -> r.path().equals(path));
    }

    /** The first {@code count} requests to a path, waiting for them up to 30 s. */
    public List<Received> awaitAt(String path, int count) {
        return Awaitility.await(count + " requests to " + path).atMost(WITHIN)
                .until(() -> received(path), all -> all.size() >= count).subList(0, count);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
        try {
            executor.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
