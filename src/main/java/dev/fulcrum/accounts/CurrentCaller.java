package dev.fulcrum.accounts;

import jakarta.enterprise.context.RequestScoped;

import dev.fulcrum.platform.errors.ApiException;

/**
 * Who is calling: set once per request by {@link Authentication}, or through {@link Access#actAs} and
 * {@link Access#actFor} (only {@code accounts} sets it).
 */
@RequestScoped
public class CurrentCaller {

    private Caller caller;

    void set(Caller caller) {
        this.caller = caller;
    }

    /** Records the caller another door (the console's session, a job's signed token) found: {@link Access#actAs}. */
    void authenticated(Caller caller) {
        this.caller = caller;
    }

    public Caller get() {
        if (caller == null) {
            throw ApiException.unauthorized("Authentication required");
        }
        return caller;
    }
}
