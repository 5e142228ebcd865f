package dev.fulcrum.platform.http;

import java.time.Duration;
import java.util.Iterator;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.impl.VertxInternal;
import io.vertx.core.tracing.TracingPolicy;

/**
 * The one place HTTP clients for requests Fulcrum sends out are made: webhook deliveries, model servers (completions
 * and adapter loads). Every client has the same settings, set here once:
 * <ul>
 * <li>TLS verifies the server's certificate and host name against the JVM's trust store, and always sends SNI; nothing
 * is trusted blindly.</li>
 * <li>Connections are kept alive and pooled, with Nagle's delay off.</li>
 * <li>No compression is asked for or decoded: bodies are passed on, or kept, as they arrive.</li>
 * <li>No redirect is followed: a redirect is the answer.</li>
 * </ul>
 * A client differs only in its connect timeout, its pool and who makes its span ({@link Spans}). Request timeouts
 * belong to each request. Where a target may be chosen by someone other than a platform administrator (a webhook's
 * URL), the caller resolves it through its SSRF guard first and connects to the address the guard allowed
 * ({@code automations/SsrfGuard}); model servers are named by administrators only and are expected on private networks.
 * The clients are closed when the application stops, if their owner has not closed them before. A download that blocks
 * a thread of its own to stream into a file (a model pulled from the Hugging Face Hub) takes the JDK's client with the
 * same rules instead ({@link #blocking}).
 */
@ApplicationScoped
public class OutboundHttp {

    /** Who makes the client span of a request. */
    public enum Spans {
        /** Vert.x's instrumentation: a client span per request, its {@code traceparent} sent. */
        INSTRUMENTED,
        /** The caller: it starts the span and sends its {@code traceparent} itself. */
        CALLER
    }

    @Inject
    Vertx vertx;

    private final Set<HttpClient> open = ConcurrentHashMap.newKeySet();

    /** A new client; close it with {@link #close(HttpClient)} when its owner goes away. */
    public HttpClient client(Duration connectTimeout, PoolOptions pool, Spans spans) {
        HttpClientOptions options = new HttpClientOptions()
                .setConnectTimeout(Math.toIntExact(connectTimeout.toMillis())).setTrustAll(false).setVerifyHost(true)
                .setForceSni(true).setKeepAlive(true).setTcpNoDelay(true).setTryUseCompression(false)
                .setDecompressionSupported(false).setMaxRedirects(0)
                .setTracingPolicy(spans == Spans.CALLER ? TracingPolicy.IGNORE : TracingPolicy.PROPAGATE);
        HttpClient client = vertx.createHttpClient(options, pool);
        open.add(client);
        return client;
    }

    /**
     * A JDK client with the same rules, for a download written to a file from a thread of its own: TLS verified (the
     * JDK's default), no compression asked for (the JDK asks for none), no redirect followed, HTTP/1.1.
     */
    public static java.net.http.HttpClient blocking(Duration connectTimeout, Executor executor) {
        return java.net.http.HttpClient.newBuilder().version(java.net.http.HttpClient.Version.HTTP_1_1)
                .followRedirects(java.net.http.HttpClient.Redirect.NEVER).connectTimeout(connectTimeout)
                .executor(executor).build();
    }

    public void close(HttpClient client) {
        if (open.remove(client)) {
            client.close();
        }
    }

    /** The number of Vert.x event loops, for owners that give each loop a pool of its own. */
    public int eventLoops() {
        int loops = 0;
        for (Iterator<?> it = ((VertxInternal) vertx).getEventLoopGroup().iterator(); it.hasNext(); it.next()) {
            loops++;
        }
        return Math.max(1, loops);
    }

    @PreDestroy
    void stop() {
        open.forEach(this::close);
    }
}
