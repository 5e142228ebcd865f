package dev.fulcrum.platform;

import java.util.Set;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;

import org.jboss.resteasy.reactive.server.ServerRequestFilter;

/**
 * Bounds request bodies before they are read. JSON bodies are read whole into memory, so they must declare their
 * length, which may not exceed {@code fulcrum.datasets.max-request-bytes} on the datasets API and
 * {@code fulcrum.max-json-request-bytes} elsewhere. Multipart uploads (artifact files) are streamed to disk; the
 * artifacts service bounds each file and {@code quarkus.http.limits.max-body-size} the whole request.
 */
public class RequestBodyLimits {

    private static final Set<String> WRITES = Set.of("POST", "PUT", "PATCH");

    /** Looked up per request: filters are created before run-time configuration exists. */
    @Inject
    Instance<FulcrumConfig> config;

    @ServerRequestFilter(preMatching = true)
    public void limit(ContainerRequestContext request) {
        String length = request.getHeaderString(HttpHeaders.CONTENT_LENGTH);
        boolean chunked = request.getHeaderString("Transfer-Encoding") != null;
        boolean writes = WRITES.contains(request.getMethod());
        if (length == null && !chunked && !writes) {
            return; // no body
        }
        MediaType type = request.getMediaType();
        // HTTP/1.1 announces a body of unknown length as chunked; HTTP/2 only by sending one
        if (length == null && !chunked && type == null
                || type != null && type.isCompatible(MediaType.MULTIPART_FORM_DATA_TYPE)) {
            return;
        }
        if (length == null) {
            throw ApiException.payloadTooLarge("JSON request bodies must declare their Content-Length");
        }
        String path = request.getUriInfo().getPath();
        long max = ErrorShapes.isDatasets(path) ? config.get().datasets().maxRequestBytes()
                : config.get().maxJsonRequestBytes();
        if (parse(length) > max) {
            throw ApiException.payloadTooLarge("Request body larger than " + max + " bytes");
        }
    }

    private static long parse(String length) {
        try {
            return Long.parseLong(length.trim());
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }
}
