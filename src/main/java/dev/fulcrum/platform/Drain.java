package dev.fulcrum.platform;

import java.time.Duration;
import java.time.Instant;

import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Default;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import org.jboss.logging.Logger;

import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;

/**
 * Whether this replica is draining: it stops taking work (chat completions are refused with 503, webhook deliveries and
 * training jobs are no longer claimed) and finishes or hands back what it holds, each part within its grace
 * ({@link ShutdownSettings}). Readiness ({@code /q/health/ready}, check {@value #NAME}) is DOWN from then on.
 * <p>
 * The drain begins as soon as the process is asked to stop: Quarkus fires {@link ShutdownDelayInitiatedEvent} at once
 * on SIGTERM ({@code quarkus.shutdown.delay-enabled}), before the optional {@code quarkus.shutdown.delay} and while the
 * HTTP server still serves; {@link ShutdownEvent}, which comes after the HTTP server closed, begins it too should the
 * first not have come. Each participant observes {@link Started} and keeps its own deadline from
 * {@link #deadline(Duration)}, so the parts drain side by side.
 */
@Readiness
@Default
@ApplicationScoped
public class Drain implements HealthCheck {

    public static final String NAME = "Draining";

    private static final Logger LOG = Logger.getLogger(Drain.class);

    /** The drain began at {@code at} (fired once, synchronously). */
    public record Started(Instant at, long startedNanos) {
    }

    @Inject
    Event<Started> started;

    private volatile Started since;

    void onStopRequested(@Observes ShutdownDelayInitiatedEvent event) {
        begin();
    }

    void onStop(@Observes @Priority(1) ShutdownEvent event) {
        begin();
    }

    /** Begins the drain; later calls do nothing. */
    public void begin() {
        Started now;
        synchronized (this) {
            if (since != null) {
                return;
            }
            now = new Started(Instant.now(), System.nanoTime());
            since = now;
        }
        LOG.info("Draining: readiness is DOWN, no new work is taken, and work under way finishes or is handed back");
        started.fire(now);
    }

    public boolean draining() {
        return since != null;
    }

    /**
     * The {@link System#nanoTime()} at which a part given {@code grace} must be done; {@link Long#MAX_VALUE} while not
     * draining.
     */
    public long deadline(Duration grace) {
        Started s = since;
        return s == null ? Long.MAX_VALUE : s.startedNanos() + grace.toNanos();
    }

    @Override
    public HealthCheckResponse call() {
        Started s = since;
        return s == null ? HealthCheckResponse.up(NAME)
                : HealthCheckResponse.named(NAME).down().withData("since", s.at().toString()).build();
    }
}
