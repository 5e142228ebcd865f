package dev.fulcrum.platform.http;

import java.util.Optional;

import jakarta.annotation.Priority;
import jakarta.enterprise.inject.Alternative;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

import org.eclipse.microprofile.config.inject.ConfigProperty;

import io.prometheus.client.exemplars.ExemplarSampler;
import io.quarkus.micrometer.runtime.export.exemplars.OpentelemetryExemplarSamplerProvider;

/**
 * Exemplars on {@code /q/metrics} (a recent request's trace id beside a histogram's bucket, in the OpenMetrics format)
 * only while traces are made. With the OpenTelemetry SDK off, as it is without an exporter (docs/operations.md), there
 * is no trace to point to, yet Quarkus's sampler would still look for the current span at every update of every meter:
 * about 1 % of the CPU of a gateway request (bench/README.md). This producer replaces Quarkus's own and keeps it when
 * the SDK is on.
 */
@Singleton
public class MetricExemplars {

    @Produces
    @Singleton
    @Alternative
    @Priority(1)
    Optional<ExemplarSampler> sampler(
            @ConfigProperty(name = "quarkus.otel.sdk.disabled", defaultValue = "false") boolean tracingOff) {
        return tracingOff ? Optional.empty() : new OpentelemetryExemplarSamplerProvider().exemplarSampler();
    }
}
