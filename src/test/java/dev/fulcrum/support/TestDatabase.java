package dev.fulcrum.support;

import io.quarkus.test.common.QuarkusTestResource;

/**
 * Every {@code @QuarkusTest} runs against the embedded PostgreSQL of {@link EmbeddedPostgresResource}: declared once
 * here, since a test resource that is not restricted to its annotated class applies to all test classes. The same goes
 * for the {@link TestDns} of {@link TestDnsResource}, the DNS server of every replica name, and the fake Hugging Face
 * Hub's address of {@link FakeHubPort} and the fake Slack's of {@link FakeSlackPort}.
 */
@QuarkusTestResource(EmbeddedPostgresResource.class)
@QuarkusTestResource(TestDnsResource.class)
@QuarkusTestResource(FakeHubPort.class)
@QuarkusTestResource(FakeSlackPort.class)
public final class TestDatabase {

    private TestDatabase() {
    }
}
