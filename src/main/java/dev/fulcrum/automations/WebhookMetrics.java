package dev.fulcrum.automations;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.agroal.api.AgroalDataSource;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.quarkus.runtime.Startup;

import dev.fulcrum.automations.WebhookSender.Outcome;
import dev.fulcrum.platform.database.DatabaseGauge;

/**
 * The webhook metrics (docs/operations.md). Every meter has a fixed set of label values, so all are resolved once here
 * and counting is an atomic add.
 */
@Startup // its meters are on the page from the start, at zero
@ApplicationScoped
public class WebhookMetrics {

    /** The latency buckets of webhook histograms, from a fast local endpoint to the longest retry schedules. */
    static final Duration[] BUCKETS = { Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25),
            Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500),
            Duration.ofSeconds(1), Duration.ofMillis(2500), Duration.ofSeconds(5), Duration.ofSeconds(10),
            Duration.ofSeconds(30), Duration.ofMinutes(1), Duration.ofMinutes(5), Duration.ofMinutes(30),
            Duration.ofHours(2), Duration.ofHours(12), Duration.ofDays(1) };

    @Inject
    MeterRegistry registry;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    WebhooksConfig config;

    private Counter delivered;
    private Counter retrying;
    private Counter failed;
    private Counter refusedByGuard;
    private Counter attempts2xx;
    private Counter attempts3xx;
    private Counter attempts4xx;
    private Counter attempts5xx;
    private Counter attemptsError;
    private Counter attemptsRefused;
    private Counter disabledGone;
    private Timer attemptDuration;
    private Timer eventToReceipt;

    @PostConstruct
    void register() {
        delivered = delivery("delivered");
        retrying = delivery("retrying");
        failed = delivery("failed");
        refusedByGuard = delivery("refused_by_guard");
        attempts2xx = attempt("2xx");
        attempts3xx = attempt("3xx");
        attempts4xx = attempt("4xx");
        attempts5xx = attempt("5xx");
        attemptsError = attempt("error");
        attemptsRefused = attempt("refused_by_guard");
        disabledGone = Counter.builder("fulcrum.webhooks.disabled")
                .description("Webhooks disabled because their endpoint answered 410 Gone").tag("reason", "gone")
                .register(registry);
        attemptDuration = Timer.builder("fulcrum.webhook.attempt.duration")
                .description("One webhook request: resolving, connecting and the answer")
                .serviceLevelObjectives(BUCKETS).register(registry);
        eventToReceipt = Timer.builder("fulcrum.webhook.delivery.latency")
                .description("From the event that queued a delivery to the endpoint's 2xx receipt, retries included")
                .serviceLevelObjectives(BUCKETS).register(registry);
        DatabaseGauge.register(registry, dataSource, "fulcrum.webhook.queue.depth",
                "Pending webhook deliveries: due now, leased (being sent), waiting for a retry", """
                        select case when leased_until > now() then 'leased' when next_attempt_at <= now() then 'due'
                                    else 'waiting_retry' end, count(*)
                        from webhook_deliveries where state = 'pending' group by 1""",
                config.pollInterval().compareTo(Duration.ofSeconds(5)) > 0 ? config.pollInterval()
                        : Duration.ofSeconds(5),
                List.of("due", "leased", "waiting_retry"), state -> Tags.of("state", state));
    }

    private Counter delivery(String outcome) {
        return Counter.builder("fulcrum.webhook.deliveries")
                .description("Outcomes of delivery attempts: delivered, retrying (failed, another attempt follows),"
                        + " failed (no attempt follows), refused_by_guard (the address was refused)")
                .tag("outcome", outcome).register(registry);
    }

    private Counter attempt(String result) {
        return Counter.builder("fulcrum.webhook.attempts")
                .description(
                        "Webhook requests by result: the status class answered, error (no answer), refused_by_guard")
                .tag("result", result).register(registry);
    }

    /** A request was sent (or refused by the guard) and this came of it. */
    void attempted(Outcome outcome) {
        Integer status = outcome.status();
        if (status == null) {
            boolean refused = outcome.error() != null && outcome.error().startsWith(WebhookSender.REFUSED);
            (refused ? attemptsRefused : attemptsError).increment();
            if (refused) {
                return; // nothing was sent
            }
        } else {
            (status < 300 ? attempts2xx : status < 400 ? attempts3xx : status < 500 ? attempts4xx : attempts5xx)
                    .increment();
        }
        attemptDuration.record(Duration.ofMillis(outcome.latencyMs()));
    }

    /**
     * What an attempt of a delivery came to: its next {@code state} ({@code succeeded}, {@code pending} or
     * {@code failed}); {@code createdAt}, the delivery's queuing, for the event-to-receipt latency.
     */
    void delivery(String state, Outcome outcome, OffsetDateTime createdAt) {
        if (state.equals("succeeded")) {
            delivered.increment();
            if (createdAt != null) {
                eventToReceipt.record(Duration
                        .ofMillis(Math.max(0, System.currentTimeMillis() - createdAt.toInstant().toEpochMilli())));
            }
        } else if (outcome.error() != null && outcome.error().startsWith(WebhookSender.REFUSED)) {
            refusedByGuard.increment();
        } else if (state.equals("pending")) {
            retrying.increment();
        } else {
            failed.increment();
        }
    }

    /** A webhook was disabled because its endpoint answered 410 Gone. */
    void disabledByGone() {
        disabledGone.increment();
    }
}
