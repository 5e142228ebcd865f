package dev.fulcrum.accounts;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a resource method that accepts a token this server signed ({@link JwtTokens}), such as a training worker's
 * job-scoped token, instead of an API key; the method verifies it. {@link Authentication} then only checks that
 * credentials were sent.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface AuthenticatesWithSignedToken {
}
