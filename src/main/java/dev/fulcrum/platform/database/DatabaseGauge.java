package dev.fulcrum.platform.database;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import javax.sql.DataSource;

import org.jboss.logging.Logger;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.vertx.core.Context;

/**
 * Gauges whose values come from one counting query, run at most once per {@code maxAge} however often the metrics are
 * scraped: a scrape reads the last counts and, when they are older than that, counts again (on the scraping thread when
 * it may block, otherwise on a thread of its own; concurrent scrapes never count twice). The query returns rows of
 * (label value, count) for labels from a fixed set, so the gauges' label values are that set; a value absent from the
 * rows counts 0. When the database does not answer, the last counts stay.
 */
public final class DatabaseGauge {

    private static final Logger LOG = Logger.getLogger(DatabaseGauge.class);

    private final DataSource dataSource;
    private final String query;
    private final long maxAgeNanos;
    private final AtomicBoolean counting = new AtomicBoolean();
    private volatile Map<String, Long> counts = Map.of();
    private volatile long countedAt;
    private volatile boolean counted;

    private DatabaseGauge(DataSource dataSource, String query, Duration maxAge) {
        this.dataSource = dataSource;
        this.query = query;
        this.maxAgeNanos = maxAge.toNanos();
    }

    /**
     * Registers gauge {@code name} with one series per label set: {@code labels} maps each key of the query's first
     * column to the series' tags.
     */
    public static DatabaseGauge register(MeterRegistry registry, DataSource dataSource, String name, String description,
            String query, Duration maxAge, List<String> keys, Function<String, Tags> labels) {
        DatabaseGauge gauge = new DatabaseGauge(dataSource, query, maxAge);
        for (String key : keys) {
            Gauge.builder(name, gauge, g -> g.value(key)).description(description).tags(labels.apply(key))
                    .strongReference(true).register(registry);
        }
        return gauge;
    }

    private double value(String key) {
        refreshIfStale();
        return counted ? counts.getOrDefault(key, 0L) : Double.NaN;
    }

    private void refreshIfStale() {
        if (counted && System.nanoTime() - countedAt < maxAgeNanos) {
            return;
        }
        if (!counting.compareAndSet(false, true)) {
            return; // another scrape is counting; this one reports the last counts
        }
        if (Context.isOnEventLoopThread()) {
            Thread thread = new Thread(this::count, "metrics-count");
            thread.setDaemon(true);
            thread.start();
        } else {
            count();
        }
    }

    private void count() {
        try (Connection connection = dataSource.getConnection();
                Statement statement = connection.createStatement()) {
            statement.setQueryTimeout(5);
            Map<String, Long> read = new HashMap<>();
            try (ResultSet rows = statement.executeQuery(query)) {
                while (rows.next()) {
                    read.merge(rows.getString(1), rows.getLong(2), Long::sum);
                }
            }
            counts = Map.copyOf(read);
            counted = true;
        } catch (SQLException e) {
            LOG.debugf("A metrics count failed (%s); the last counts stay", e.getMessage());
        } finally {
            countedAt = System.nanoTime();
            counting.set(false);
        }
    }
}
