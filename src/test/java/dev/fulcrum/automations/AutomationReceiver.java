package dev.fulcrum.automations;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.function.Predicate;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;

/**
 * A real HTTP endpoint on a free loopback port that records what it receives and checks the signature header with its
 * own HMAC code (not the sender's).
 */
final class AutomationReceiver implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** One request as received. */
    record Received(String path, Map<String, List<String>> headers, byte[] body) {
        String header(String name) {
            for (Map.Entry<String, List<String>> h : headers.entrySet()) {
                if (h.getKey() != null && h.getKey().equalsIgnoreCase(name)) {
                    return h.getValue().get(0);
                }
            }
            return null;
        }

        String text() {
            return new String(body, StandardCharsets.UTF_8);
        }

        JsonNode json() {
            try {
                return JSON.readTree(body);
            } catch (IOException e) {
                throw new AssertionError("The body is not JSON: " + text(), e);
            }
        }

        /** Whether {@code X-Service-Signature} is the lowercase hex HMAC-SHA256 of the body under {@code secret}. */
        boolean signedWith(String secret) {
            try {
                Mac mac = Mac.getInstance("HmacSHA256");
                mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
                return HexFormat.of().formatHex(mac.doFinal(body)).equals(header("X-Service-Signature"));
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }
    }

    private final HttpServer server;
    private final List<Received> received = new CopyOnWriteArrayList<>();

    AutomationReceiver() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            try (InputStream in = exchange.getRequestBody()) {
                received.add(new Received(exchange.getRequestURI().getPath(), Map.copyOf(exchange.getRequestHeaders()),
                        in.readAllBytes()));
            }
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.start();
    }

    String url(String path) {
        return "http://127.0.0.1:" + server.getAddress().getPort() + path;
    }

    List<Received> received() {
        return List.copyOf(received);
    }

    List<Received> at(String path) {
        return received.stream().filter(r -> r.path().equals(path)).toList();
    }

    /** Waits until a request matching {@code wanted} arrived (up to 20 s) and answers it. */
    Received await(Predicate<Received> wanted) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            for (Received r : received) {
                if (wanted.test(r)) {
                    return r;
                }
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("Nothing matching arrived; received: " + received);
    }

    Received awaitAt(String path) {
        return await(r -> r.path().equals(path));
    }

    @Override
    public void close() {
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
}
