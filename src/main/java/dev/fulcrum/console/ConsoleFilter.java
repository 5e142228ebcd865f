package dev.fulcrum.console;

import java.net.URI;

import jakarta.inject.Inject;
import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ResourceInfo;
import jakarta.ws.rs.core.Cookie;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.server.ServerRequestFilter;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.accounts.CurrentCaller;

/**
 * Authenticates the console's pages by their session cookie (the API's operations keep their Bearer and Basic
 * authentication, see {@code Authentication}). A page without a valid session sends the browser to the sign-in page. A
 * state-changing request must come from the console's own origin: its {@code Origin} header, when present, must be this
 * server, and each form's {@code _csrf} field must carry the session's token (checked by {@link ConsolePages#csrf}).
 */
public class ConsoleFilter {

    @Inject
    ConsoleSessions sessions;

    @Inject
    ConsoleRequest console;

    @Inject
    CurrentCaller current;

    @ServerRequestFilter(priority = Priorities.AUTHENTICATION + 1)
    public Response authenticate(ContainerRequestContext request, ResourceInfo resource) {
        Class<?> page = resource.getResourceClass();
        if (page == null || !page.isAnnotationPresent(AuthenticatesWithSession.class)) {
            return null;
        }
        boolean reads = HttpMethod.GET.equals(request.getMethod()) || HttpMethod.HEAD.equals(request.getMethod());
        if (!reads && !ConsoleSessions.sameOrigin(request.getHeaderString("Origin"), request.getHeaderString("Host"))) {
            return Response.status(Response.Status.FORBIDDEN).type(MediaType.TEXT_PLAIN_TYPE)
                    .entity("Refused: the request did not come from this console").build();
        }
        Cookie cookie = request.getCookies().get(ConsoleSessions.COOKIE);
        var session = sessions.resolve(cookie == null ? null : cookie.getValue());
        if (session.isPresent()) {
            console.signedIn(session.get());
            current.authenticated(session.get().caller());
        } else if (resource.getResourceMethod() == null
                || !resource.getResourceMethod().isAnnotationPresent(SignedOut.class)) {
            return Response.seeOther(URI.create(ConsolePages.SIGN_IN)).build();
        }
        return null;
    }
}
