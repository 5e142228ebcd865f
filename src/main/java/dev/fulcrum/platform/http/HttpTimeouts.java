package dev.fulcrum.platform.http;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.AttributeKey;
import io.quarkus.vertx.http.HttpServerOptionsCustomizer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.impl.ConnectionBase;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.platform.FulcrumConfig;

/**
 * How long a connection may take to send a request's headers, {@code fulcrum.http.header-timeout}: from the moment it
 * opens, and on a kept-alive connection from the end of one response to the next request's headers. Vert.x has no such
 * setting: its read-idle timeout (nothing received for that long closes the connection) stands for it until a
 * connection's first request, and from then on a handler of ours, which knows when a request is under way, applies it
 * only between requests (a client waiting for a long answer sends nothing and must not be cut off; there
 * {@code quarkus.http.idle-timeout} applies: nothing sent or received for that long). Replacing Vert.x's handler at
 * every request instead measured a few per cent of the CPU of a small request (bench/metrics.sh). A client that opens
 * connections and sends part of a request's headers, or nothing, is disconnected after the header timeout.
 */
@Singleton
public class HttpTimeouts implements HttpServerOptionsCustomizer {

    private static final Logger LOG = Logger.getLogger(HttpTimeouts.class);
    private static final String IDLE = "idle"; // the name of Vert.x's IdleStateHandler in a connection's pipeline
    private static final String HEADER_TIMEOUT = "fulcrum-header-timeout";
    private static final AttributeKey<HeaderTimeout> TIMEOUT = AttributeKey.valueOf("fulcrum-header-timeout");

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

    /**
     * A request begins on its connection ({@link RequestFront}): the header timeout waits until it has ended. Returns
     * the connection's timeout, to be told {@link HeaderTimeout#ended()}, or null where none applies.
     */
    HeaderTimeout started(RoutingContext context) {
        HttpConnection connection = context.request().connection();
        if (connection instanceof ConnectionBase base) {
            HeaderTimeout timeout = headerTimeout(base.channel());
            if (timeout != null) {
                timeout.started();
                return timeout;
            }
        }
        return null;
    }

    /**
     * The connection's own header timeout, set up at its first request: until then Vert.x's read-idle timeout stands
     * for it (so it counts from the moment the connection opens); from then on one handler, which knows when a request
     * is under way, replaces it. Null where neither can be applied.
     */
    private HeaderTimeout headerTimeout(Channel channel) {
        HeaderTimeout timeout = channel.attr(TIMEOUT).get();
        if (timeout != null) {
            return timeout;
        }
        if (channel.pipeline().get(IDLE) == null) {
            if (!warned) {
                warned = true;
                LOG.warn("fulcrum.http.header-timeout cannot be applied to this connection; only"
                        + " quarkus.http.idle-timeout applies to its connections");
            }
            return null;
        }
        HeaderTimeout created = new HeaderTimeout(channel, headerTimeout.toNanos());
        channel.attr(TIMEOUT).set(created);
        channel.eventLoop().execute(() -> {
            if (channel.isActive() && channel.pipeline().get(IDLE) != null) {
                channel.pipeline().replace(IDLE, IDLE, new IdleStateHandler(0, 0, idleMillis, TimeUnit.MILLISECONDS));
                channel.pipeline().addFirst(HEADER_TIMEOUT, created);
            }
        });
        return created;
    }

    /**
     * Closes the connection when nothing was received for the header timeout while no request is under way: one
     * scheduled check at a time, moved on by what arrives (every change runs on the connection's event loop).
     */
    static final class HeaderTimeout extends ChannelInboundHandlerAdapter {
        private final Channel channel;
        private final long timeoutNanos;
        private int active;
        private long lastRead = System.nanoTime();
        private boolean checking;

        HeaderTimeout(Channel channel, long timeoutNanos) {
            this.channel = channel;
            this.timeoutNanos = timeoutNanos;
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object message) {
            lastRead = System.nanoTime();
            ctx.fireChannelRead(message);
        }

        void started() {
            onLoop(() -> active++);
        }

        void ended() {
            onLoop(() -> {
                if (--active == 0) {
                    lastRead = System.nanoTime();
                    checkIn(timeoutNanos);
                }
            });
        }

        private void onLoop(Runnable change) {
            if (channel.eventLoop().inEventLoop()) {
                change.run();
            } else {
                channel.eventLoop().execute(change);
            }
        }

        private void checkIn(long nanos) {
            if (!checking) {
                checking = true;
                channel.eventLoop().schedule(this::check, nanos, TimeUnit.NANOSECONDS);
            }
        }

        private void check() {
            checking = false;
            if (active > 0 || !channel.isActive()) {
                return;
            }
            long quiet = System.nanoTime() - lastRead;
            if (quiet >= timeoutNanos) {
                channel.close();
            } else {
                checkIn(timeoutNanos - quiet);
            }
        }
    }
}
