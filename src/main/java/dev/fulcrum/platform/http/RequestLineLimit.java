package dev.fulcrum.platform.http;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import jakarta.ws.rs.core.HttpHeaders;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.vertx.ext.web.RoutingContext;

/**
 * Bounds the request target (path and query) at {@value #MAX_URI_LENGTH} characters with a 414 in the shape of the
 * interface the path belongs to. The HTTP server itself reads request lines of up to
 * {@code quarkus.http.limits.max-initial-line-length} (64 KiB here) and answers longer ones with a bare 414 of its own,
 * before any route runs; below that, this answers first ({@link RequestFront}), for every interface (including the
 * inference routes).
 */
@Singleton
public class RequestLineLimit {

    /** Characters of a request's path and query together (as nginx allows by default). */
    public static final int MAX_URI_LENGTH = 8_192;

    @Inject
    ObjectMapper json;

    /** Whether the request is refused ({@link RequestFront}); it has then been answered with the 414. */
    boolean refused(RoutingContext context) {
        String uri = context.request().uri();
        if (uri == null || uri.length() <= MAX_URI_LENGTH) {
            return false;
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
        return true;
    }
}
