package dev.fulcrum.console;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/** A console page that answers without a session too (sign-in); {@link ConsoleFilter} does not redirect it. */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
@interface SignedOut {
}
