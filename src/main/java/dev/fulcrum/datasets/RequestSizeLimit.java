package dev.fulcrum.datasets;

import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.core.HttpHeaders;

import org.jboss.resteasy.reactive.server.ServerRequestFilter;

import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.FulcrumConfig;

/**
 * Refuses dataset requests whose declared body is larger than {@code fulcrum.datasets.max-request-bytes} before the
 * body is read. Chunked bodies without a length are bounded by {@code quarkus.http.limits.max-body-size}.
 */
public class RequestSizeLimit {

    /** Looked up per request: filters are created before run-time configuration exists. */
    @Inject
    Instance<FulcrumConfig> config;

    @ServerRequestFilter(preMatching = true)
    public void limit(ContainerRequestContext request) {
        String path = request.getUriInfo().getPath();
        if (!path.startsWith("/v2/") && !path.startsWith("/table/")) {
            return;
        }
        String length = request.getHeaderString(HttpHeaders.CONTENT_LENGTH);
        long max = config.get().datasets().maxRequestBytes();
        if (length != null && parse(length) > max) {
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
