package dev.fulcrum.console;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.platform.http.ErrorPages;

/**
 * The console's refusals met before a page's code ran are pages too (the error page with the API's status and message);
 * the JSON a page's script reads ({@code .json}) answers as those routes do, {@code {"error": message}}.
 */
@ApplicationScoped
public class ConsoleErrorPages implements ErrorPages {

    @Override
    public boolean shows(Class<?> resource) {
        return resource.isAnnotationPresent(AuthenticatesWithSession.class);
    }

    @Override
    public Response page(int status, String message, String path) {
        if (path.endsWith(".json")) {
            return Pages.jsonError(status, message);
        }
        return Pages.html(status, ConsoleTemplates.error(status, message));
    }
}
