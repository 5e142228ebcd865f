package dev.fulcrum.console;

import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Named;

import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * The console's view of one request, read by every page as {@code inject:console}: the signed-in user, the token its
 * forms carry, and the error of the API operation a form ran (with the fields it names).
 */
@Named("console")
@RequestScoped
public class ConsoleRequest {

    private ConsoleSessions.Session session;
    private String error;
    private final Map<String, String> fieldErrors = new LinkedHashMap<>();

    void signedIn(ConsoleSessions.Session session) {
        this.session = session;
    }

    ConsoleSessions.Session session() {
        return session;
    }

    public boolean isSignedIn() {
        return session != null;
    }

    public String getUser() {
        return session == null ? "" : session.caller().username();
    }

    public boolean isAdmin() {
        return session != null && session.caller().admin();
    }

    public String getCsrf() {
        return session == null ? "" : session.csrf();
    }

    public String getError() {
        return error;
    }

    /** The message of the error the operation answered about this form field, or null. */
    public String fieldError(String field) {
        return fieldErrors.get(field);
    }

    /** Records what an API operation refused, to be shown on the page rendered in answer. */
    void failed(ApiException e) {
        error = e.getMessage();
        for (Violation violation : e.violations()) {
            fieldErrors.putIfAbsent(violation.field(), violation.msg());
        }
    }

    void failed(String message) {
        error = message;
    }
}
