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
import org.jboss.resteasy.reactive.server.WithFormRead;
import org.jboss.resteasy.reactive.server.core.ResteasyReactiveRequestContext;
import org.jboss.resteasy.reactive.server.multipart.FormValue;
import org.jboss.resteasy.reactive.server.spi.ResteasyReactiveContainerRequestContext;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.accounts.ConsoleSessions;

/**
 * Authenticates the console's pages by their session cookie (the API's operations keep their Bearer and Basic
 * authentication, see {@code Authentication}). A page without a valid session sends the browser to the sign-in page. A
 * state-changing request must come from the console's own origin: its {@code Origin} header, when present, must be this
 * server, and the request must carry the session's token, in its form's {@code _csrf} field or in the
 * {@code X-CSRF-Token} header (the pages' scripts). Both checks are made here, for every state-changing method of every
 * page, so that no handler can forget them; a handler sees only requests that passed.
 */
public class ConsoleFilter {

    /** The form field that carries the session's token. */
    static final String CSRF_FIELD = "_csrf";

    @Inject
    ConsoleSessions sessions;

    @Inject
    ConsoleRequest console;

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
            sessions.enter(session.get());
        } else if (resource.getResourceMethod() == null
                || !resource.getResourceMethod().isAnnotationPresent(SignedOut.class)) {
            return Response.seeOther(URI.create(ConsolePages.SIGN_IN)).build();
        }
        return null;
    }

    /**
     * A state-changing request of a signed-in session must carry the session's token. The form is read before this runs
     * (only for the console's pages, which this filter is bound to), so no handler declares or checks the field.
     */
    @AuthenticatesWithSession
    @WithFormRead
    @ServerRequestFilter(priority = Priorities.AUTHENTICATION + 2)
    public Response checkToken(ResteasyReactiveContainerRequestContext request) {
        boolean reads = HttpMethod.GET.equals(request.getMethod()) || HttpMethod.HEAD.equals(request.getMethod());
        if (reads || console.session() == null
                || ConsoleSessions.csrfMatches(console.session(), presentedToken(request))) {
            return null;
        }
        return Response.status(Response.Status.FORBIDDEN).type(MediaType.TEXT_PLAIN_TYPE)
                .entity("The form is stale or did not come from this console; reload the page").build();
    }

    /** The token a state-changing request carries: the header of the pages' scripts, else the form's field. */
    private static String presentedToken(ResteasyReactiveContainerRequestContext request) {
        String header = request.getHeaderString(ConsoleSessions.CSRF_HEADER);
        if (header != null) {
            return header;
        }
        if (request.getServerRequestContext() instanceof ResteasyReactiveRequestContext context
                && context.getFormData() != null) {
            FormValue field = context.getFormData().getFirst(CSRF_FIELD);
            return field == null || field.isFileItem() ? null : field.getValue();
        }
        return null;
    }
}
