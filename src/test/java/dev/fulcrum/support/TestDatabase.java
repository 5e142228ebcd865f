package dev.fulcrum.support;

import io.quarkus.test.common.QuarkusTestResource;

/**
 * Every {@code @QuarkusTest} runs against the embedded PostgreSQL of {@link EmbeddedPostgresResource}: declared once
 * here, since a test resource that is not restricted to its annotated class applies to all test classes.
 */
@QuarkusTestResource(EmbeddedPostgresResource.class)
public final class TestDatabase {

    private TestDatabase() {
    }
}
