package dev.fulcrum.inference.engine.upstream;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.vertx.core.Context;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.SocketAddress;

import dev.fulcrum.platform.http.OutboundHttp;

/**
 * One model server as the gateway reaches it (a replica of a catalog model): its base URL, the address it is reached at
 * when its host name stands for several ({@code null}: the host is resolved by the connection), its connection pools,
 * and the options of each request path, built once. Every upstream model name served by the server (the base model,
 * each LoRA adapter) shares its connections, so {@code maxConcurrency} and {@code maxQueue} bound the server, not one
 * name.
 */
final class ModelServer {

    /** Below this many connections per event loop the limits stay exact: one pool for all loops. */
    private static final int MIN_CONNECTIONS_PER_LOOP = 4;

    /** What reaching a server takes; the catalog model's settings. */
    record Settings(String apiKey, long connectTimeoutMs, long timeoutMs, int maxConcurrency, int maxQueue) {
    }

    private final OutboundHttp http;
    private final SocketAddress address;
    private final Duration connectTimeout;
    private final HttpClient client;
    private final PoolOptions perLoopPool;
    private final Map<Thread, HttpClient> perLoop = new ConcurrentHashMap<>();
    private final RequestOptions common;
    private final String base;
    /** Set when the server answered {@code /responses} with a bare 404 or 405: it has no Responses API. */
    volatile boolean noResponsesApi;

    ModelServer(OutboundHttp http, String baseUrl, SocketAddress address, Settings settings) {
        this.http = http;
        this.address = address;
        this.base = baseUrl.endsWith("/") ? baseUrl : baseUrl + "/";
        // the URL is taken apart once (by Vert.x's own rules), not parsed again for each request
        RequestOptions server = new RequestOptions().setAbsoluteURI(URI.create(base).toString());
        common = new RequestOptions().setMethod(HttpMethod.POST).setHost(server.getHost()).setPort(server.getPort())
                .setSsl(Boolean.TRUE.equals(server.isSsl())).setIdleTimeout(settings.timeoutMs())
                .putHeader("Content-Type", "application/json");
        if (address != null) {
            common.setServer(address); // the Host header and TLS name stay the URL's
        }
        if (settings.apiKey() != null && !settings.apiKey().isEmpty()) {
            common.putHeader("Authorization", "Bearer " + settings.apiKey());
        }
        this.connectTimeout = Duration.ofMillis(settings.connectTimeoutMs());
        this.client = http.client(connectTimeout,
                new PoolOptions().setHttp1MaxSize(settings.maxConcurrency()).setMaxWaitQueueSize(settings.maxQueue()),
                OutboundHttp.Spans.INSTRUMENTED);
        int loops = http.eventLoops();
        this.perLoopPool = settings.maxConcurrency() >= loops * MIN_CONNECTIONS_PER_LOOP
                ? new PoolOptions().setHttp1MaxSize(settings.maxConcurrency() / loops).setMaxWaitQueueSize(
                        Math.max(0, settings.maxQueue() / loops))
                : null;
    }

    /** The address connected to, or null when the URL's host is resolved by each connection. */
    SocketAddress address() {
        return address;
    }

    /** The options of a {@code method} request to {@code relative} (resolved against the base URL). */
    RequestOptions options(HttpMethod method, String relative, String accept) {
        String uri = new RequestOptions().setAbsoluteURI(URI.create(base).resolve(relative).toString()).getURI();
        return new RequestOptions(common).setMethod(method).setURI(uri).putHeader("Accept", accept);
    }

    /**
     * The client for a request made on the current thread. With room for at least {@value #MIN_CONNECTIONS_PER_LOOP}
     * connections per event loop, each loop has its own pool (its share of {@code maxConcurrency} and
     * {@code maxQueue}), whose connections live on that loop: a request and its answer then never change thread. With
     * smaller limits, and off the event loops, one pool serves all and the limits are exact.
     */
    HttpClient client() {
        if (perLoopPool == null || !Context.isOnEventLoopThread()) {
            return client;
        }
        return perLoop.computeIfAbsent(Thread.currentThread(),
                loop -> http.client(connectTimeout, perLoopPool, OutboundHttp.Spans.INSTRUMENTED));
    }

    void close() {
        http.close(client);
        perLoop.values().forEach(http::close);
    }
}
