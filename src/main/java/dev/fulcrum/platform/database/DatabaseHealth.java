package dev.fulcrum.platform.database;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import jakarta.annotation.PostConstruct;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Default;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

import io.agroal.api.AgroalDataSource;
import io.smallrye.health.api.HealthGroup;

import dev.fulcrum.platform.FulcrumConfig;

/**
 * Whether the database answers, within {@code fulcrum.health.database-timeout} (default 1 s): the readiness probe
 * ({@code /q/health/ready}, check "Database") and the database check of {@code /v1/system-check}. The check (a
 * connection from the pool and {@code select 1}) runs on a thread of its own, so that neither a pool that cannot hand
 * out a connection nor a database that accepts connections but never answers (a stopped or hung PostgreSQL) holds the
 * caller longer than the timeout. While one check is still stuck, later ones wait for it (until it has been stuck for
 * the timeout) instead of starting another: a hung database holds one thread, however often it is probed. It is also in
 * the {@value #SYSTEM_CHECK} group, so {@code /v1/system-check} and the readiness probe never disagree.
 */
@Readiness
@HealthGroup(DatabaseHealth.SYSTEM_CHECK)
@Default
@ApplicationScoped
public class DatabaseHealth implements HealthCheck {

    public static final String NAME = "Database";

    /** The health group of {@code /v1/system-check}: this check, the API's and the training queues'. */
    public static final String SYSTEM_CHECK = "system-check";

    /** The outcome of one check: null error when the database answered. */
    public record Result(boolean up, String error, Duration took) {
    }

    @Inject
    AgroalDataSource dataSource;

    @Inject
    FulcrumConfig config;

    private Duration timeout;

    private ExecutorService checker;
    private CompletableFuture<Void> running;
    private long runningSince;

    @PostConstruct
    void start() {
        timeout = config.health().databaseTimeout();
        checker = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "database-health");
            thread.setDaemon(true);
            return thread;
        });
    }

    @PreDestroy
    void stop() {
        checker.shutdownNow();
    }

    @Override
    public HealthCheckResponse call() {
        Result result = check();
        HealthCheckResponseBuilder response = HealthCheckResponse.named(NAME).status(result.up())
                .withData("duration_ms", result.took().toMillis());
        return (result.up() ? response : response.withData("error", result.error())).build();
    }

    /** Checks the database; answers within the timeout whatever the database does. */
    public Result check() {
        long start = System.nanoTime();
        CompletableFuture<Void> attempt;
        long waited;
        synchronized (this) {
            if (running == null || running.isDone()) {
                running = CompletableFuture.runAsync(this::query, checker);
                runningSince = start;
            }
            attempt = running;
            waited = start - runningSince;
        }
        String error = null;
        try {
            // a check that has been stuck for the whole timeout already answers at once
            attempt.get(Math.max(0, timeout.toNanos() - waited), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            error = "database unreachable: no answer within " + timeout.toMillis() + " ms";
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() instanceof CompletionException wrapped && wrapped.getCause() != null
                    ? wrapped.getCause()
                    : e.getCause();
            error = "database unreachable: " + cause.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error = "database check interrupted";
        }
        return new Result(error == null, error, Duration.ofNanos(System.nanoTime() - start));
    }

    private void query() {
        try (Connection connection = dataSource.getConnection();
                Statement statement = connection.createStatement()) {
            statement.setQueryTimeout((int) Math.max(1, timeout.toSeconds()));
            statement.execute("select 1");
        } catch (SQLException e) {
            throw new CompletionException(e);
        }
    }
}
