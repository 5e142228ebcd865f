package dev.fulcrum.accounts;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a resource method whose service checks the API key in the same query as its own data, through
 * {@link CurrentCaller#keyHash()} and {@link CurrentCaller#authenticated(Caller)}. {@link Authentication} then only
 * checks that credentials were sent. Only for hot read paths; every other method is authenticated before it runs.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface AuthenticatesInQuery {
}
