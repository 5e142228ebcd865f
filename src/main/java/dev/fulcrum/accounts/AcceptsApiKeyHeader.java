package dev.fulcrum.accounts;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a resource class whose clients send the API key in a header of their own, {@code X-API-Key}, with a prefix
 * their SDK insists on ({@code tml-} for the Tinker SDK): {@link Authentication} then takes the key after the prefix
 * when no {@code Authorization} header came. It is the same key, with the same roles.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface AcceptsApiKeyHeader {

    /** The prefix the client puts before the key; the key is what follows it. */
    String prefix();
}
