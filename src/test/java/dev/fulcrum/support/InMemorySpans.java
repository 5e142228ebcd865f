package dev.fulcrum.support;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.quarkus.arc.Unremovable;

/**
 * The span exporter of the tests: finished spans are kept in memory, and no OTLP exporter is installed (a span exporter
 * bean replaces it). Spans are recorded only where a test profile turns sampling on (see platform/OperatorSettings);
 * without an OTLP endpoint Fulcrum samples nothing.
 */
@ApplicationScoped
public class InMemorySpans {

    @Produces
    @Singleton
    @Unremovable
    InMemorySpanExporter inMemorySpanExporter() {
        return InMemorySpanExporter.create();
    }
}
