package dev.fulcrum.platform;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.AttributeKey;
import io.quarkus.vertx.http.HttpServerOptionsCustomizer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.impl.ConnectionBase;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * How long a connection may take to send a request's headers, {@code fulcrum.http.header-timeout}: from the moment it
 * opens, and on a kept-alive connection from the end of one response to the next request's headers. Vert.x has no such
 * setting, so its read-idle timeout (nothing received for that long closes the connection) is set to it while a
 * connection has no request under way, and lifted while one is (a client waiting for a long answer sends nothing and
 * must not be cut off; there {@code quarkus.http.idle-timeout} applies: nothing sent or received for that long). A
 * client that opens connections and sends part of a request's headers, or nothing, is disconnected after the header
 * timeout.
 */
@ApplicationScoped
public class HttpTimeouts implements HttpServerOptionsCustomizer {

    private static final Logger LOG = Logger.getLogger(HttpTimeouts.class);
    private static final String IDLE = "idle"; // the name of Vert.x's IdleStateHandler in a connection's pipeline
    private static final AttributeKey<AtomicInteger> ACTIVE = AttributeKey.valueOf("fulcrum-active-requests");

    @Inject
    FulcrumConfig config;

    private Duration headerTimeout;

    private volatile long idleMillis;
    private volatile boolean warned;

    @Override
    public void customizeHttpServer(HttpServerOptions options) {
        headerTimeout = config.http().headerTimeout();
        idleMillis = options.getIdleTimeoutUnit().toMillis(options.getIdleTimeout());
        // No HTTP/2 without TLS (h2c): until Vert.x knows whether a plain connection speaks HTTP/1 or h2c it acts on
        // the idle timeout only, and a connection sending part of a request would never be cut off. HTTP/2 over TLS
        // (ALPN) is not affected.
        options.setHttp2ClearTextEnabled(false);
        options.setIdleTimeoutUnit(TimeUnit.MILLISECONDS).setIdleTimeout((int) idleMillis)
                .setReadIdleTimeout((int) headerTimeout.toMillis());
    }

    void routes(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).handler(this::requestStarted);
    }

    private void requestStarted(RoutingContext context) {
        HttpConnection connection = context.request().connection();
        if (connection instanceof ConnectionBase base && base.channel().pipeline().get(IDLE) != null) {
            Channel channel = base.channel();
            AtomicInteger active = channel.attr(ACTIVE).setIfAbsent(new AtomicInteger());
            active = active != null ? active : channel.attr(ACTIVE).get();
            AtomicInteger count = active;
            if (count.incrementAndGet() == 1) {
                replace(channel, 0);
            }
            context.addEndHandler(done -> {
                if (count.decrementAndGet() == 0 && channel.isActive()) {
                    replace(channel, config.http().headerTimeout().toMillis());
                }
            });
        } else if (!warned) {
            warned = true;
            LOG.warn("fulcrum.http.header-timeout cannot be applied to " + connection.getClass().getName()
                    + "; only quarkus.http.idle-timeout applies to its connections");
        }
        context.next();
    }

    private void replace(Channel channel, long readIdleMillis) {
        channel.eventLoop().execute(() -> {
            ChannelHandler current = channel.pipeline().get(IDLE);
            if (current != null && channel.isActive()) {
                channel.pipeline().replace(IDLE, IDLE,
                        new IdleStateHandler(readIdleMillis, 0, idleMillis, TimeUnit.MILLISECONDS));
            }
        });
    }
}
