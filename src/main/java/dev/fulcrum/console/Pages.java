package dev.fulcrum.console;

import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.function.Supplier;

import jakarta.validation.ConstraintViolationException;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import io.quarkus.qute.TemplateException;
import io.quarkus.qute.TemplateInstance;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.http.ErrorResponses;

/** How console pages answer: rendered HTML, redirects after a form, and the API's errors shown on a page. */
final class Pages {

    private Pages() {
    }

    static Response html(TemplateInstance page) {
        return html(200, page);
    }

    static Response html(int status, TemplateInstance page) {
        return Response.status(status).type(MediaType.TEXT_HTML_TYPE.withCharset("UTF-8")).entity(page.render())
                .header("Cache-Control", "no-store").build();
    }

    /** The status a page answers a refused operation with: the API's own, from the one table of domain errors. */
    static int status(ApiException e) {
        return ErrorResponses.status(e.kind());
    }

    /** The error page of a refused operation, with the API's status and message. */
    static Response errorPage(ApiException e) {
        return html(status(e), ConsoleTemplates.error(status(e), e.getMessage()));
    }

    /** The error of a route a page's script reads ({@code .json}), as those scripts expect it. */
    static Response jsonError(int status, String message) {
        return Response.status(status).type(MediaType.APPLICATION_JSON_TYPE)
                .entity(Map.of("error", String.valueOf(message))).header("Cache-Control", "no-store").build();
    }

    /** After a form that worked: the browser loads the page again (POST, redirect, GET). */
    static Response seeOther(String path) {
        return Response.seeOther(URI.create(path)).build();
    }

    /** A page, or the error page with the API's status when the operations it reads refuse. */
    static Response page(Supplier<TemplateInstance> page) {
        try {
            return html(page.get());
        } catch (ApiException e) {
            return errorPage(e);
        } catch (FormException e) {
            return html(422, ConsoleTemplates.error(422, e.getMessage()));
        } catch (ConstraintViolationException e) {
            return errorPage(refusal(e));
        } catch (TemplateException e) {
            // a template that reads an operation while it renders gets its refusal wrapped
            return errorPage(refusal(e));
        }
    }

    /** The API's refusal behind a template's failure; anything else is the server's fault and goes on. */
    static ApiException refusal(TemplateException e) {
        for (Throwable cause = e.getCause(); cause != null; cause = cause.getCause()) {
            if (cause instanceof ApiException refused) {
                return refused;
            }
            if (cause instanceof ConstraintViolationException violation) {
                return refusal(violation);
            }
        }
        throw e;
    }

    /**
     * What the API answers when a page's query value breaks its contract (a negative offset, say): operations called in
     * process refuse by their constraints' exception rather than by an {@link ApiException}.
     */
    static ApiException refusal(ConstraintViolationException e) {
        ApiException refused = ErrorResponses.refusal(e);
        if (refused == null) {
            throw e;
        }
        return refused;
    }

    /**
     * Runs a form's operation; on success the browser is sent to {@code then}, otherwise the page is rendered again
     * with the operation's error (and the fields it names) and the operation's status.
     */
    static Response act(ConsoleRequest console, Runnable operation, String then, Supplier<TemplateInstance> page) {
        try {
            operation.run();
            return seeOther(then);
        } catch (ApiException e) {
            console.failed(e);
            return again(status(e), page);
        } catch (FormException e) {
            console.failed(e.api());
            return again(422, page);
        } catch (ConstraintViolationException e) {
            ApiException refused = refusal(e);
            console.failed(refused);
            return again(status(refused), page);
        }
    }

    static Response again(int status, Supplier<TemplateInstance> page) {
        try {
            return html(status, page.get());
        } catch (ApiException e) {
            return errorPage(e);
        } catch (ConstraintViolationException e) {
            return errorPage(refusal(e));
        }
    }

    static String path(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    @SuppressWarnings("unchecked")
    static <T> T body(Response response) {
        return (T) response.getEntity();
    }

    /** A form field the console could not turn into the operation's request (a number that is none, say). */
    static final class FormException extends RuntimeException {

        private final String field;

        FormException(String field, String message) {
            super(message, null, false, false);
            this.field = field;
        }

        ApiException api() {
            return ApiException.invalid(ApiException.Violation.of(getMessage(), "value_error", "body", field));
        }
    }

    static Long number(String field, String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            return Long.parseLong(value.strip());
        } catch (NumberFormatException e) {
            throw new FormException(field, "Not a whole number: " + value);
        }
    }

    static Double decimal(String field, String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            return Double.parseDouble(value.strip());
        } catch (NumberFormatException e) {
            throw new FormException(field, "Not a number: " + value);
        }
    }

    static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value;
    }
}
