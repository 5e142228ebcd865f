package dev.fulcrum.platform.http;

import java.util.List;
import java.util.Map;
import java.util.Set;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.server.ServerRequestFilter;

import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Bounds request bodies before they are read. JSON bodies are read whole into memory, so they must declare their
 * length, which may not exceed {@code fulcrum.datasets.max-request-bytes} on the datasets API and
 * {@code fulcrum.max-json-request-bytes} elsewhere. Multipart uploads (artifact files) are streamed to disk; the
 * artifacts service bounds each file and {@code quarkus.http.limits.max-body-size} the whole request; so is every
 * operation whose contract reads a file as its body ({@code application/octet-stream}: the W&B SDK's artifact files,
 * their parts and run files, a worker's checkpoint files), whatever type the request declares, each bounded by its own
 * setting. A GraphQL document is bounded at {@value #MAX_GRAPHQL_BYTES} bytes, refused in GraphQL's error shape.
 */
public class RequestBodyLimits {

    private static final Set<String> WRITES = Set.of("POST", "PUT", "PATCH");

    /**
     * The largest GraphQL request body (1 MiB): the documents W&B clients send are a few kilobytes, and a document is
     * parsed whole, so its size is bounded far below the datasets API's bodies.
     */
    public static final long MAX_GRAPHQL_BYTES = 1 << 20;

    /** Looked up per request: filters are created before run-time configuration exists. */
    @Inject
    Instance<FulcrumConfig> config;

    @ServerRequestFilter(preMatching = true)
    public Response limit(ContainerRequestContext request) {
        String length = request.getHeaderString(HttpHeaders.CONTENT_LENGTH);
        boolean chunked = request.getHeaderString("Transfer-Encoding") != null;
        boolean writes = WRITES.contains(request.getMethod());
        if (length == null && !chunked && !writes) {
            return null; // no body
        }
        MediaType type = request.getMediaType();
        // HTTP/1.1 announces a body of unknown length as chunked; HTTP/2 only by sending one
        if (length == null && !chunked && type == null
                || type != null && type.isCompatible(MediaType.MULTIPART_FORM_DATA_TYPE)) {
            return null;
        }
        String path = request.getUriInfo().getPath();
        if (ErrorShapes.readsFile(request.getMethod(), path)) {
            return null; // a file streamed to disk and bounded per file by its own setting, as multipart uploads are
        }
        if (ErrorShapes.normalized(path).equals("/graphql")) {
            // refused from its declared length, before a byte of the document is read or parsed
            String message = length == null ? "JSON request bodies must declare their Content-Length"
                    : parse(length) > MAX_GRAPHQL_BYTES
                            ? "A GraphQL document may be at most " + MAX_GRAPHQL_BYTES + " bytes"
                            : null;
            return message == null ? null
                    : Response.status(413).type(MediaType.APPLICATION_JSON_TYPE)
                            .entity(Map.of("errors", List.of(Map.of("message", message)))).build();
        }
        if (length == null) {
            throw ApiException.payloadTooLarge("JSON request bodies must declare their Content-Length");
        }
        long max = ErrorShapes.isDatasets(path) ? config.get().datasets().maxRequestBytes()
                : config.get().maxJsonRequestBytes();
        if (parse(length) > max) {
            throw ApiException.payloadTooLarge("Request body larger than " + max + " bytes");
        }
        return null;
    }

    private static long parse(String length) {
        try {
            return Long.parseLong(length.trim());
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }
}
