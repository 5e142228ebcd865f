package dev.fulcrum.platform;

import jakarta.inject.Singleton;

import io.micrometer.core.instrument.Tags;
import io.quarkus.micrometer.runtime.HttpServerMetricsTagsContributor;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.impl.HttpServerRequestInternal;
import io.vertx.ext.web.RoutingContext;

/**
 * Keeps the path as requested out of the HTTP server metrics' {@code uri} label, which anyone could otherwise fill:
 * past {@code quarkus.micrometer.binder.http-server.max-uri-tags} values, endpoints not yet seen would no longer be
 * recorded. Quarkus labels a request by the template of the JAX-RS method RESTEasy matched, else by its raw path,
 * except 404 ({@code NOT_FOUND}) and redirects. Answered before a method matched, and labelled {@code UNKNOWN} here,
 * are 405 (a method the path does not take), 406, 413, 414, 415, RESTEasy's own answer to {@code OPTIONS} (200) and a
 * 5xx. (Quarkus's {@code suppress4xx-errors} would label the 4xx alone, but also every 4xx and 5xx of a template
 * without parameters, such as {@code /v1/models}, since it cannot tell such a template from a raw path.) Fulcrum's
 * Vert.x routes name their path like RESTEasy does ({@link #template}); Quarkus's own routes under {@code /q/} have
 * fixed paths; files served as they are (the console's assets) are the jar's.
 */
@Singleton
public class RequestMetricLabels implements HttpServerMetricsTagsContributor {

    /** The label value of a request that matched no template (Quarkus's own, for unmatched 4xx answers). */
    public static final String UNKNOWN = "UNKNOWN";
    /**
     * Where RESTEasy Reactive puts the matched template, in the request's Vert.x context, for the metrics and the
     * traces to read (its ObservabilityUtil).
     */
    private static final String TEMPLATE = "UrlPathTemplate";
    private static final Tags UNMATCHED = Tags.of("uri", UNKNOWN);

    /** Names the template of a request that a Vert.x route of Fulcrum's answers, as RESTEasy does for its methods. */
    public static void template(RoutingContext context, String template) {
        if (context.request() instanceof HttpServerRequestInternal request) {
            request.context().putLocal(TEMPLATE, template);
        }
    }

    @Override
    public Tags contribute(Context context) {
        int status = context.response().statusCode();
        if (status == 404 || status / 100 == 3 || status < 400 && context.request().method() != HttpMethod.OPTIONS
                || context.requestContextLocalData(TEMPLATE) != null) {
            return Tags.empty(); // labelled NOT_FOUND, REDIRECTION, or by the route's template
        }
        String path = context.request().path();
        return path == null || path.startsWith("/q/") ? Tags.empty() : UNMATCHED;
    }
}
