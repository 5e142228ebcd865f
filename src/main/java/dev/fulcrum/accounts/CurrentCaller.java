package dev.fulcrum.accounts;

import jakarta.enterprise.context.RequestScoped;

import dev.fulcrum.platform.ApiException;

/** Who is calling: set once per request by {@link Authentication}, or by a service that checked the key itself. */
@RequestScoped
public class CurrentCaller {

    private Caller caller;
    private String keyHash;

    void set(Caller caller) {
        this.caller = caller;
    }

    void presented(String keyHash) {
        this.keyHash = keyHash;
    }

    /** The SHA-256 of the presented API key, for a query that checks it (see {@link AuthenticatesInQuery}). */
    public String keyHash() {
        return keyHash;
    }

    /** Records the caller a service found for {@link #keyHash()}. */
    public void authenticated(Caller caller) {
        this.caller = caller;
    }

    public Caller get() {
        if (caller == null) {
            throw ApiException.unauthorized("Authentication required");
        }
        return caller;
    }
}
