package dev.fulcrum.accounts;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a resource class of the web console, whose pages authenticate with the console's session cookie (see
 * {@code dev.fulcrum.console.ConsoleSessions}) and record the caller in {@link CurrentCaller} themselves;
 * {@link Authentication} leaves them alone. The API's own operations never carry it.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface AuthenticatesWithSession {
}
