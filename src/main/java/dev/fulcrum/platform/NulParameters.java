package dev.fulcrum.platform;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.UriInfo;

import org.jboss.resteasy.reactive.server.ServerRequestFilter;

import dev.fulcrum.accounts.AuthenticatesWithSignedToken;
import dev.fulcrum.platform.ApiException.Violation;

/**
 * PostgreSQL text cannot hold a NUL character, so no name holds one: a path parameter with a NUL names nothing (404)
 * and a query parameter with one is invalid (422), answered before the value reaches a query. Runs after
 * authentication; a method that verifies a signed token itself does that first and is left to it.
 */
public class NulParameters {

    private static final Map<Method, Boolean> SIGNED = new ConcurrentHashMap<>();

    @ServerRequestFilter(priority = Priorities.USER)
    public void refuse(UriInfo uri, ResourceInfo resource) {
        Method method = resource.getResourceMethod();
        if (method != null
                && SIGNED.computeIfAbsent(method, m -> m.isAnnotationPresent(AuthenticatesWithSignedToken.class))) {
            return;
        }
        for (List<String> values : uri.getPathParameters().values()) {
            for (String value : values) {
                if (value.indexOf('\0') >= 0) {
                    throw ApiException.notFound("Not Found");
                }
            }
        }
        for (Map.Entry<String, List<String>> param : uri.getQueryParameters().entrySet()) {
            for (String value : param.getValue()) {
                if (value.indexOf('\0') >= 0) {
                    throw ApiException.invalid(Violation.of("String should not contain NUL characters", "string_type",
                            "query", param.getKey()));
                }
            }
        }
    }
}
