package dev.fulcrum.inference.gateway;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.scheduler.Scheduled;
import io.vertx.core.Vertx;

import dev.fulcrum.inference.InferenceConfig;

/**
 * Writes the usage of completions in batches, off the request path: a completion only adds to an in-memory queue; a
 * full batch ({@code fulcrum.inference.usage-batch-size}) is written at once on a worker thread, a partial one only by
 * the scheduler every {@code fulcrum.inference.usage-flush-interval} (1 s), and what is left at shutdown before the
 * application stops. A crash loses at most the queue of that moment.
 * <p>
 * The worker writes full batches only: had it gone on until the queue was empty, under steady load it would have found
 * the few records that came in during its last {@code COPY} every time and written them in a {@code COPY} of their own,
 * a round trip (and PostgreSQL's work for a statement) per request or two (bench/README.md).
 */
@Singleton
public class UsageRecorder {

    private static final Logger LOG = Logger.getLogger(UsageRecorder.class);

    @Inject
    AgroalDataSource dataSource;

    @Inject
    InferenceConfig config;

    @Inject
    Vertx vertx;

    /** One completion's usage ({@code kind}: {@link dev.fulcrum.inference.UsageMeter#COMPLETION}, or Tinker work). */
    public record Usage(OffsetDateTime at, String entity, String project, long userId, String model, int promptTokens,
            int completionTokens, int latencyMs, int status, String kind) {
    }

    private final ConcurrentLinkedQueue<Usage> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger queued = new AtomicInteger();
    private final AtomicBoolean flushScheduled = new AtomicBoolean();

    public void record(Usage usage) {
        queue.add(usage);
        if (queued.incrementAndGet() >= config.usageBatchSize() && flushScheduled.compareAndSet(false, true)) {
            vertx.executeBlocking(() -> {
                try {
                    flush(config.usageBatchSize());
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
    void flush() {
        flush(1);
    }

    /** Writes batches while at least {@code least} records are queued. */
    private synchronized void flush(int least) {
        while (queued.get() >= least && !queue.isEmpty()) {
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

    /**
     * One {@code COPY ... FROM STDIN (FORMAT binary)} per batch: no statement to plan and no text to parse, the
     * cheapest way into PostgreSQL for many small rows (see the binary format in the {@code COPY} documentation).
     */
    private void write(List<Usage> batch) throws SQLException {
        byte[] data = binaryCopy(batch);
        GatewayStatements.copyUsage(dataSource, data);
    }

    /**
     * The rows in PostgreSQL's binary copy format: signature, flags, extension length, tuples, trailer. Written into
     * one array of the exact size; a batch's rows mostly share their entity, project and model strings, each encoded
     * once.
     */
    static byte[] binaryCopy(List<Usage> batch) {
        Map<String, byte[]> utf8 = new HashMap<>();
        int size = COPY_SIGNATURE.length + 4 + 4 + 2;
        for (Usage usage : batch) {
            size += ROW_BYTES + utf8(utf8, usage.entity()).length + utf8(utf8, usage.project()).length
                    + utf8(utf8, usage.model()).length + utf8(utf8, usage.kind()).length;
        }
        ByteBuffer out = ByteBuffer.allocate(size).put(COPY_SIGNATURE).putInt(0).putInt(0);
        for (Usage usage : batch) {
            out.putShort((short) 10).putInt(8).putLong(postgresMicros(usage.at()));
            text(out, utf8.get(usage.entity()));
            text(out, utf8.get(usage.project()));
            out.putInt(8).putLong(usage.userId());
            text(out, utf8.get(usage.model()));
            out.putInt(4).putInt(usage.promptTokens()).putInt(4).putInt(usage.completionTokens()).putInt(4)
                    .putInt(usage.latencyMs()).putInt(4).putInt(usage.status());
            text(out, utf8.get(usage.kind()));
        }
        return out.putShort((short) -1).array();
    }

    /** A row's bytes besides its four strings: field count, two 8-byte and four 4-byte fields, all lengths. */
    private static final int ROW_BYTES = 2 + (4 + 8) + 4 * 4 + (4 + 8) + 4 * (4 + 4);

    /**
     * A string's UTF-8 bytes, encoded once per batch, cut at 512 characters: the model column's width (an entity's and
     * a project's names are far shorter).
     */
    private static byte[] utf8(Map<String, byte[]> encoded, String value) {
        return encoded.computeIfAbsent(value,
                text -> (text.length() > 512 ? text.substring(0, 512) : text).getBytes(StandardCharsets.UTF_8));
    }

    private static final byte[] COPY_SIGNATURE = { 'P', 'G', 'C', 'O', 'P', 'Y', '\n', (byte) 0xff, '\r', '\n', 0 };

    /** PostgreSQL's timestamp epoch, 2000-01-01T00:00:00Z, in Unix seconds. */
    private static final long POSTGRES_EPOCH_SECONDS = 946_684_800L;

    /** A timestamp as PostgreSQL stores it: microseconds since 2000-01-01 UTC. */
    static long postgresMicros(OffsetDateTime at) {
        Instant instant = at.toInstant();
        return (instant.getEpochSecond() - POSTGRES_EPOCH_SECONDS) * 1_000_000L + instant.getNano() / 1_000;
    }

    private static void text(ByteBuffer out, byte[] utf8) {
        out.putInt(utf8.length).put(utf8);
    }
}
