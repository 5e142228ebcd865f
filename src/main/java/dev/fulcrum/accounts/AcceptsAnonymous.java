package dev.fulcrum.accounts;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a resource method that needs no credentials: one that reads and keeps nothing (the W&B SDK's own telemetry
 * export, which it sends without its API key and which is dropped), or a signed URL's, whose signature, checked by the
 * method, stands for the rights of the caller it was made for (the W&B SDK's artifact files, Tinker's weights
 * archives). {@link Authentication} lets it through unchecked.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface AcceptsAnonymous {
}
