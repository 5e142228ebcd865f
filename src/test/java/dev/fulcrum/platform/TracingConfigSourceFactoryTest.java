package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.Iterator;
import java.util.List;
import java.util.Map;

import org.eclipse.microprofile.config.spi.ConfigSource;
import org.junit.jupiter.api.Test;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigValue;

/**
 * Without an OTLP endpoint tracing is off (and nothing would be sampled, so nothing exported); with one, the configured
 * sampler applies.
 */
class TracingConfigSourceFactoryTest {

    private static ConfigSourceContext context(Map<String, ConfigValue> values) {
        return new ConfigSourceContext() {
            @Override
            public ConfigValue getValue(String name) {
                return values.get(name);
            }

            @Override
            public List<String> getProfiles() {
                return List.of();
            }

            @Override
            public Iterator<String> iterateNames() {
                return values.keySet().iterator();
            }
        };
    }

    private static ConfigValue value(String name, String value, String source, int ordinal) {
        return ConfigValue.builder().withName(name).withValue(value).withConfigSourceName(source)
                .withConfigSourceOrdinal(ordinal).build();
    }

    private static String sampler(Map<String, ConfigValue> values) {
        return supplied(values, TracingConfigSourceFactory.SAMPLER);
    }

    private static String supplied(Map<String, ConfigValue> values, String name) {
        for (ConfigSource source : new TracingConfigSourceFactory().getConfigSources(context(values))) {
            return source.getValue(name);
        }
        return null;
    }

    @Test
    void withoutAnEndpointTracingIsOffEntirely() {
        // no span objects and no JDBC spans unless asked for (QUARKUS_OTEL_SDK_DISABLED=false, docs/operations.md)
        assertEquals("true", supplied(Map.of(), TracingConfigSourceFactory.SDK_DISABLED));
        assertEquals("false", supplied(Map.of(), TracingConfigSourceFactory.JDBC_TELEMETRY));
        assertEquals(null, supplied(
                Map.of("quarkus.otel.exporter.otlp.endpoint",
                        value("quarkus.otel.exporter.otlp.endpoint", "http://collector:4317", "EnvConfigSource", 300)),
                TracingConfigSourceFactory.SDK_DISABLED));
    }

    @Test
    void withoutAnEndpointNothingIsSampled() {
        assertEquals("always_off", sampler(Map.of()));
        // the extension's own default endpoint is no configured endpoint
        assertEquals("always_off",
                sampler(Map.of("quarkus.otel.exporter.otlp.endpoint", value("quarkus.otel.exporter.otlp.endpoint",
                        "http://localhost:4317/", "DefaultValuesConfigSource", Integer.MIN_VALUE))));
    }

    @Test
    void anEndpointFromTheEnvironmentOrTheTracesEndpointTurnsSamplingBackOver() {
        assertEquals(null, sampler(Map.of("quarkus.otel.exporter.otlp.endpoint",
                value("quarkus.otel.exporter.otlp.endpoint", "http://collector:4317", "EnvConfigSource", 300))));
        assertEquals(null,
                sampler(Map.of("quarkus.otel.exporter.otlp.traces.endpoint",
                        value("quarkus.otel.exporter.otlp.traces.endpoint", "http://localhost:4317",
                                "application.properties", 250))));
        assertFalse(new TracingConfigSourceFactory().getPriority().isEmpty());
    }
}
