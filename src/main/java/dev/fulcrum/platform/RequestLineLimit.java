package dev.fulcrum.platform;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.ws.rs.core.HttpHeaders;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * Bounds the request target (path and query) at {@value #MAX_URI_LENGTH} characters with a 414 in the shape of the
 * interface the path belongs to. The HTTP server itself reads request lines of up to
 * {@code quarkus.http.limits.max-initial-line-length} (64 KiB here) and answers longer ones with a bare 414 of its own,
 * before any route runs; below that, this route answers first, for every interface (including the inference routes).
 */
@ApplicationScoped
public class RequestLineLimit {

    /** Characters of a request's path and query together (as nginx allows by default). */
    public static final int MAX_URI_LENGTH = 8_192;

    @Inject
    ObjectMapper json;

    void routes(@Observes Router router) {
        router.route().order(Integer.MIN_VALUE + 1).handler(this::check);
    }

    void check(RoutingContext context) {
        String uri = context.request().uri();
        if (uri == null || uri.length() <= MAX_URI_LENGTH) {
            context.next();
            return;
        }
        String path = context.request().path();
        // before JAX-RS: the shape is the one of the operation at the path, else the path's prefix decides
        ErrorResponses.Body body = ErrorResponses.body(ErrorShapes.at(path), path, new ErrorResponses.Reply(414,
                "URI Too Long: the path and query of a request may be at most " + MAX_URI_LENGTH + " characters",
                java.util.List.of()));
        try {
            context.response().setStatusCode(414).putHeader(HttpHeaders.CONTENT_TYPE, body.type().toString())
                    .end(json.writeValueAsString(body.entity()));
        } catch (JsonProcessingException e) {
            context.fail(e);
        }
    }
}
