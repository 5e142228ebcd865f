package dev.fulcrum.inference.gateway;

import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.inference.InferenceCaller;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.OpenAiErrors;
import dev.fulcrum.platform.errors.ApiException.Kind;
import dev.fulcrum.platform.http.HttpRequestMetrics;

/**
 * {@code POST /console/playground/completions}: the web console's playground runs a chat completion as its signed-in
 * user. The browser holds no API key, only the console's session cookie ({@code Path=/console}), so the playground
 * cannot call {@code /v1/chat/completions}, and that route never accepts the cookie. This route accepts the session
 * instead of a key and then runs the very path of {@link ChatCompletions} (body checks, model, the project's membership
 * rule, quota, concurrency, backend, usage accounting), with the answer passed through as it is generated (a stream
 * when the body asks for one) to the page's {@code fetch()} reader.
 * <p>
 * It lives here, not in {@code dev.fulcrum.console}, because it is the completion route itself with another way of
 * knowing the caller: a Vert.x route that reuses {@link ChatCompletions}' non-blocking path, which has no JAX-RS
 * interface the console could call in process. Like every state-changing console request it must come from the console:
 * an {@code Origin}, when the browser sends one (it does on every fetch POST), naming this server, and the session's
 * CSRF token in the {@code X-CSRF-Token} header. Errors are the inference API's (OpenAI's shape): 401 without a valid
 * session, 403 for another origin or a wrong token, and the API's own answers (403 for a project of a team the user is
 * not a member of, 404 for an unknown model, 429 over the quota, ...).
 */
@ApplicationScoped
public class ConsoleCompletions {

    /** The route. */
    public static final String PATH = "/console/playground/completions";

    @Inject
    ChatCompletions completions;

    @Inject
    InferenceCallers callers;

    @Inject
    ConsoleSessions sessions;

    @Inject
    Vertx vertx;

    void routes(@Observes Router router) {
        router.route(HttpMethod.POST, PATH).order(-100).handler(this::handle);
    }

    void handle(RoutingContext context) {
        long started = System.nanoTime();
        HttpRequestMetrics.template(context, PATH);
        HttpServerRequest request = context.request();
        if (!ConsoleSessions.sameOrigin(request.getHeader("Origin"), request.getHeader("Host"))) {
            OpenAiErrors.write(context.response(),
                    InferenceFailure.forbidden("Refused: the request did not come from this console"));
            return;
        }
        if (!completions.admit(context)) {
            return;
        }
        Cookie cookie = request.getCookie(ConsoleSessions.COOKIE);
        String token = request.getHeader(ConsoleSessions.CSRF_HEADER);
        InferenceCallers.ProjectHeader project = ChatCompletions.project(request);
        Future<InferenceCaller> caller = vertx
                .executeBlocking(() -> sessions.resolve(cookie == null ? null : cookie.getValue()), false)
                .recover(unavailable -> Future
                        .failedFuture(new InferenceFailure(Kind.UNAVAILABLE, "Database unavailable", null, null, null)))
                .compose(session -> signedIn(session, token))
                .compose(session -> callers.resolve(session.caller(), project));
        completions.complete(context, caller, started);
    }

    private static Future<ConsoleSessions.Session> signedIn(Optional<ConsoleSessions.Session> session, String token) {
        if (session.isEmpty()) {
            return Future.failedFuture(new InferenceFailure(Kind.UNAUTHENTICATED, "Sign in to the console first", null,
                    "not_signed_in", null));
        }
        if (!ConsoleSessions.csrfMatches(session.get(), token)) {
            return Future.failedFuture(InferenceFailure.forbidden(
                    "Refused: the request did not carry the session's " + ConsoleSessions.CSRF_HEADER + " token"));
        }
        return Future.succeededFuture(session.get());
    }
}
