package dev.fulcrum.platform.http;

import jakarta.ws.rs.core.Response;

/**
 * A door whose answers are pages, not an API's JSON (the web console): {@link ErrorResponses} lets it render the
 * refusals met before its own code ran (a query value that is no number, a NUL character, an unknown method), so that a
 * person sees the error on a page like every other.
 */
public interface ErrorPages {

    /** Whether the resource class is one of this door's. */
    boolean shows(Class<?> resource);

    /** The refusal as this door answers it at {@code path}. */
    Response page(int status, String message, String path);
}
