package dev.fulcrum.inference;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.scheduler.Scheduled;
import io.vertx.core.Vertx;

/**
 * Writes the usage of completions in batches, off the request path: a completion only adds to an in-memory queue; a
 * full batch ({@code fulcrum.inference.usage-batch-size}) is written at once on a worker thread, a partial one by the
 * scheduler every {@code fulcrum.inference.usage-flush-interval} (1 s), and what is left at shutdown before the
 * application stops. A crash loses at most the queue of that moment.
 */
@ApplicationScoped
public class UsageRecorder {

    private static final Logger LOG = Logger.getLogger(UsageRecorder.class);

    @Inject
    AgroalDataSource dataSource;

    @Inject
    InferenceConfig config;

    @Inject
    Vertx vertx;

    /** One completion's usage. */
    public record Usage(OffsetDateTime at, String entity, String project, long userId, String model, int promptTokens,
            int completionTokens, int latencyMs, int status) {
    }

    private final ConcurrentLinkedQueue<Usage> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicBoolean flushScheduled = new AtomicBoolean();

    public void record(Usage usage) {
        queue.add(usage);
        if (queued.incrementAndGet() >= config.usageBatchSize() && flushScheduled.compareAndSet(false, true)) {
            vertx.executeBlocking(() -> {
                try {
                    flush();
                } finally {
                    flushScheduled.set(false);
                }
                return null;
            }, false);
        }
    }

    @Scheduled(every = "${fulcrum.inference.usage-flush-interval:1s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void scheduledFlush() {
        flush();
    }

    /** On shutdown, while the connection pool is still open (it is closed before beans are destroyed). */
    void drain(@Observes ShutdownEvent stop) {
        flush();
    }

    /** Writes everything queued; on a database error the batch is put back and retried on the next flush. */
    synchronized void flush() {
        while (!queue.isEmpty()) {
            List<Usage> batch = new ArrayList<>();
            Usage usage;
            while (batch.size() < config.usageBatchSize() && (usage = queue.poll()) != null) {
                batch.add(usage);
            }
            queued.addAndGet(-batch.size());
            try {
                write(batch);
            } catch (SQLException e) {
                LOG.warnf("Could not write %d usage records, retrying: %s", batch.size(), e.getMessage());
                queue.addAll(batch);
                queued.addAndGet(batch.size());
                return;
            }
        }
    }

    /** One statement per batch: the columns go as arrays and {@code unnest} turns them into rows. */
    private void write(List<Usage> batch) throws SQLException {
        int n = batch.size();
        String[] at = new String[n];
        String[] entity = new String[n];
        String[] project = new String[n];
        Long[] user = new Long[n];
        String[] model = new String[n];
        Integer[] prompt = new Integer[n];
        Integer[] completion = new Integer[n];
        Integer[] latency = new Integer[n];
        Integer[] status = new Integer[n];
        for (int i = 0; i < n; i++) {
            Usage usage = batch.get(i);
            at[i] = usage.at().toString();
            entity[i] = usage.entity();
            project[i] = usage.project();
            user[i] = usage.userId();
            model[i] = usage.model().length() > 512 ? usage.model().substring(0, 512) : usage.model();
            prompt[i] = usage.promptTokens();
            completion[i] = usage.completionTokens();
            latency[i] = usage.latencyMs();
            status[i] = usage.status();
        }
        try (Connection connection = dataSource.getConnection();
                PreparedStatement insert = connection.prepareStatement(
                        """
                                insert into inference_usage (created_at, entity, project, user_id, model, prompt_tokens,
                                    completion_tokens, latency_ms, status)
                                select * from unnest(?::text[]::timestamptz[], ?::varchar[], ?::varchar[], ?::bigint[], ?::varchar[],
                                    ?::int[], ?::int[], ?::int[], ?::int[])""")) {
            insert.setArray(1, connection.createArrayOf("text", at));
            insert.setArray(2, connection.createArrayOf("varchar", entity));
            insert.setArray(3, connection.createArrayOf("varchar", project));
            insert.setArray(4, connection.createArrayOf("bigint", user));
            insert.setArray(5, connection.createArrayOf("varchar", model));
            insert.setArray(6, connection.createArrayOf("int4", prompt));
            insert.setArray(7, connection.createArrayOf("int4", completion));
            insert.setArray(8, connection.createArrayOf("int4", latency));
            insert.setArray(9, connection.createArrayOf("int4", status));
            insert.executeUpdate();
        }
    }
}
