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

/** Without an OTLP endpoint nothing is sampled, so nothing is exported; with one, the configured sampler applies. */
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
        for (ConfigSource source : new TracingConfigSourceFactory().getConfigSources(context(values))) {
            return source.getValue(TracingConfigSourceFactory.SAMPLER);
        }
        return null;
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
