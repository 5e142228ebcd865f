package dev.fulcrum.accounts;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import jakarta.ws.rs.NameBinding;

/**
 * Marks a resource class of the web console, whose pages authenticate with the console's session cookie (see
 * {@link ConsoleSessions}) and record the caller in {@link CurrentCaller} themselves; {@link Authentication} leaves
 * them alone. The API's own operations never carry it. It binds the console's own filters (its CSRF check) to the
 * console's pages alone.
 */
@NameBinding
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.TYPE, ElementType.METHOD })
public @interface AuthenticatesWithSession {
}
