package dev.fulcrum.accounts;

import jakarta.enterprise.context.RequestScoped;

import dev.fulcrum.platform.ApiException;

/** Who is calling: set once per request by {@link Authentication}. */
@RequestScoped
public class CurrentCaller {

    private Caller caller;

    void set(Caller caller) {
        this.caller = caller;
    }

    public Caller get() {
        if (caller == null) {
            throw ApiException.unauthorized("Authentication required");
        }
        return caller;
    }
}
