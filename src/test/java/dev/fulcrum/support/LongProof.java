package dev.fulcrum.support;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.Tag;

/**
 * A long proof: a test of a minute or so whose capability the test command's shorter tests also reach (the reason is on
 * each), left out of {@code ./mvnw -B verify} to keep it under 35 minutes on 2 cores and run by
 * {@code bench/long-proofs.sh} (the JUnit tag {@code long-proof}; the pom's {@code excludedTestGroups}).
 */
@Target({ ElementType.TYPE, ElementType.METHOD })
@Retention(RetentionPolicy.RUNTIME)
@Tag("long-proof")
public @interface LongProof {
}
