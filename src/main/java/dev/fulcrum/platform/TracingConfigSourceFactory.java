package dev.fulcrum.platform;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

import org.eclipse.microprofile.config.spi.ConfigSource;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.common.MapBackedConfigSource;

/**
 * Traces are exported only where an OTLP endpoint is configured ({@code quarkus.otel.exporter.otlp.endpoint} or
 * {@code quarkus.otel.exporter.otlp.traces.endpoint}, e.g. {@code QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT}). Without one,
 * tracing costs nothing: this source (the lowest ordinal, so anything configured wins) turns the OpenTelemetry SDK off
 * (no span objects, no ids in log lines) and the JDBC wrapper's spans off, and samples nothing should the SDK be turned
 * back on. Trace ids in log lines without an exporter are asked for with {@code QUARKUS_OTEL_SDK_DISABLED=false}
 * (docs/operations.md): then spans get ids but none is recorded, so nothing tries to reach the OTLP exporter's default
 * address (localhost:4317).
 */
public class TracingConfigSourceFactory implements ConfigSourceFactory {

    static final String SAMPLER = "quarkus.otel.traces.sampler";
    static final String SDK_DISABLED = "quarkus.otel.sdk.disabled";
    static final String JDBC_TELEMETRY = "quarkus.datasource.jdbc.telemetry.enabled";
    static final List<String> ENDPOINTS = List.of("quarkus.otel.exporter.otlp.endpoint",
            "quarkus.otel.exporter.otlp.traces.endpoint");

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        return exporting(context) ? List.of()
                : List.of(new MapBackedConfigSource("fulcrum-tracing-without-exporter",
                        Map.of(SAMPLER, "always_off", SDK_DISABLED, "true", JDBC_TELEMETRY, "false"), 1) {
                });
    }

    /** Whether a source other than the extension's defaults gives an OTLP endpoint. */
    static boolean exporting(ConfigSourceContext context) {
        for (String name : ENDPOINTS) {
            ConfigValue value = context.getValue(name);
            if (value != null && value.getValue() != null && !value.getValue().isBlank()
                    && value.getConfigSourceOrdinal() > Integer.MIN_VALUE && !isDefaults(value.getConfigSourceName())) {
                return true;
            }
        }
        return false;
    }

    private static boolean isDefaults(String source) {
        return source != null && source.toLowerCase(java.util.Locale.ROOT).contains("default");
    }

    @Override
    public OptionalInt getPriority() {
        return OptionalInt.of(1);
    }
}
