package dev.fulcrum.platform.http;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.platform.http.HttpTimeouts.HeaderTimeout;

/**
 * The one route ahead of every other, for what every request passes through first whatever answers it: the request
 * metrics' clock ({@link HttpRequestMetrics}), the connection's header timeout held while it runs
 * ({@link HttpTimeouts}) and the bound on its path and query ({@link RequestLineLimit}). One route and one end handler
 * for the three: each route the router runs through and each end handler costs every request, the gateway's included.
 */
@Singleton
public class RequestFront {

    @Inject
    HttpRequestMetrics metrics;

    @Inject
    HttpTimeouts timeouts;

    @Inject
    RequestLineLimit lineLimit;

    void routes(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE).handler(this::begin);
    }

    private void begin(RoutingContext context) {
        long start = metrics.begin();
        HeaderTimeout timeout = timeouts.started(context);
        context.addEndHandler(done -> {
            if (timeout != null) {
                timeout.ended();
            }
            metrics.end(context, start);
        });
        if (!lineLimit.refused(context)) {
            context.next();
        }
    }
}
