package dev.fulcrum.automations;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;

import dev.fulcrum.automations.DeliveryQueue.Attempted;
import dev.fulcrum.automations.DeliveryQueue.Claimed;
import dev.fulcrum.automations.WebhookSender.Outcome;
import dev.fulcrum.automations.WebhookSender.Outgoing;
import dev.fulcrum.platform.Drain;
import dev.fulcrum.platform.ShutdownSettings;

/**
 * Sends due deliveries. One thread per replica claims due rows in batches ({@code FOR UPDATE SKIP LOCKED} in a short
 * transaction that moves them to the end of a lease), hands each to the non-blocking {@link WebhookSender}, and writes
 * the outcomes back in batches. It sleeps until woken: by a commit that queued deliveries in this replica, by an
 * outcome, by the earliest retry it scheduled itself, or by the scheduler's poll (which finds what other replicas
 * queued, and rows whose claimer died: their lease ran out). A delivery is never lost: until its outcome is written,
 * its row is pending and becomes due again when the lease ends.
 * <p>
 * While the replica drains ({@link Drain}) nothing more is claimed; the attempts under way may finish within
 * {@code fulcrum.shutdown.webhook-grace} and their outcomes are written, and the deliveries of those still running then
 * are released (due at once for any replica, the unfinished attempt not counted) before the thread ends.
 */
@ApplicationScoped
public class DeliveryDispatcher {

    private static final Logger LOG = Logger.getLogger(DeliveryDispatcher.class);
    /** Time for an attempt's outcome to be written after it ended, within the attempt's lease. */
    private static final long OUTCOME_MARGIN_MILLIS = 1_000;

    @Inject
    WebhooksConfig config;

    @Inject
    WebhookSender sender;

    @Inject
    DeliveryQueue queue;

    @Inject
    WebhookMetrics metrics;

    @Inject
    Drain drain;

    @Inject
    ShutdownSettings shutdown;

    /** A claim is wanted: set by commits, redeliveries and the poll. */
    private final AtomicBoolean woken = new AtomicBoolean(true);
    private final AtomicInteger inFlight = new AtomicInteger();
    /** The deliveries whose attempt is under way. */
    private final Set<Claimed> sending = ConcurrentHashMap.newKeySet();
    private final AtomicLong earliestRetry = new AtomicLong(Long.MAX_VALUE);
    private final Queue<Sent> outcomes = new ConcurrentLinkedQueue<>();
    private volatile boolean running;
    private volatile Thread thread;

    private record Sent(Claimed delivery, Outcome outcome, long attemptedAtMillis) {
    }

    void start(@Observes StartupEvent event) {
        String refused = leaseRefusal(config.lease(), config.requestTimeout());
        if (refused != null) {
            throw new IllegalStateException(refused);
        }
        if (config.lease().compareTo(config.requestTimeout().plusSeconds(5)) < 0) {
            LOG.warnf("fulcrum.webhooks.lease (%s) should exceed the request timeout (%s) by a few seconds; otherwise a"
                    + " slow attempt may be sent twice", config.lease(), config.requestTimeout());
        }
        running = true;
        thread = new Thread(this::run, "webhook-dispatcher");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Why a lease is refused at startup, or null: one no longer than an attempt and the time to write its outcome can
     * run out while the attempt is under way (the delivery is claimed and sent again), and no delivery could ever be
     * sent straight after its commit ({@link #sendLeased}): every one would wait for its lease to end.
     */
    static String leaseRefusal(Duration lease, Duration requestTimeout) {
        Duration least = requestTimeout.plusMillis(OUTCOME_MARGIN_MILLIS);
        return lease.compareTo(least) > 0 ? null
                : "fulcrum.webhooks.lease (" + lease + ") must be longer than fulcrum.webhooks.request-timeout ("
                        + requestTimeout + ") plus " + OUTCOME_MARGIN_MILLIS + " ms: with a lease that short a slow"
                        + " attempt could be sent twice, and every delivery would wait for its lease to end instead of"
                        + " being sent at once";
    }

    /** Lets the thread see the drain at once: it stops claiming and finishes or releases what is in flight. */
    void draining(@Observes Drain.Started started) {
        wake();
    }

    /**
     * Waits for the drain (the drain began before this runs: {@link Drain} observes the event first), then stops the
     * thread. Should it still be busy (a database that does not answer), what is in flight is sent again after its
     * lease.
     */
    void stop(@Observes ShutdownEvent event) throws InterruptedException {
        drain.begin();
        wake();
        Thread t = thread;
        if (t != null) {
            t.join(Math.max(0, graceLeftMillis()) + config.pollInterval().toMillis() + 2_000);
        }
        running = false;
        wake();
    }

    /** Makes the dispatcher look for due deliveries now. Cheap; calls coalesce. */
    public void wake() {
        woken.set(true);
        unpark();
    }

    private void unpark() {
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    /** The fallback for deliveries queued by other replicas and for expired leases. */
    @Scheduled(every = "${fulcrum.webhooks.poll-interval:1s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void poll() {
        wake();
    }

    private void run() {
        boolean more = false; // the last claim was full: more rows may be due
        while (running) {
            try {
                if (drain.draining() && drained()) {
                    break;
                }
                boolean wanted = woken.getAndSet(false);
                if (System.currentTimeMillis() >= earliestRetry.get()) {
                    earliestRetry.set(Long.MAX_VALUE);
                    wanted = true;
                }
                int room = drain.draining() ? 0 : Math.min(config.claimBatch(), config.maxInFlight() - inFlight.get());
                if ((wanted || more) && room > 0) {
                    List<Claimed> claimed = queue.claim(room);
                    claimed.forEach(this::dispatch);
                    more = claimed.size() == room;
                } else if (wanted) {
                    more = true; // no room now: claim once outcomes free some
                }
                writeOutcomes(); // after the claim: new deliveries go out first
                if (!woken.get() && outcomes.isEmpty() && !(more && room > 0)) {
                    long wait = Math.max(1, Math.min(earliestRetry.get() - System.currentTimeMillis(), 60_000));
                    if (drain.draining()) { // wake up at the end of the grace at the latest
                        wait = Math.max(1, Math.min(wait, graceLeftMillis() + 1));
                    }
                    LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(wait));
                }
            } catch (RuntimeException e) {
                LOG.error("Webhook dispatch failed; retrying after the poll interval", e);
                LockSupport.parkNanos(this, config.pollInterval().toNanos());
            }
        }
    }

    /**
     * While draining: writes the outcomes that arrived; true once no attempt is under way, or once the grace is over,
     * after releasing the deliveries whose attempts are still under way.
     */
    private boolean drained() {
        writeOutcomes();
        if (inFlight.get() == 0 && outcomes.isEmpty()) {
            LOG.info("Draining: no webhook attempt is under way");
            return true;
        }
        if (graceLeftMillis() > 0) {
            return false;
        }
        List<Claimed> unfinished = List.copyOf(sending);
        int released = queue.release(unfinished);
        LOG.infof("Draining: %d webhook attempts were still under way after %s; %d deliveries released for any"
                + " replica", unfinished.size(), shutdown.webhookGrace(), released);
        return true;
    }

    /** While draining: what is left of the webhook grace, in milliseconds (negative once it is over). */
    private long graceLeftMillis() {
        return TimeUnit.NANOSECONDS.toMillis(drain.deadline(shutdown.webhookGrace()) - System.nanoTime());
    }

    /**
     * Whether a delivery queued now may skip the claim: it is then written already leased to this replica and handed to
     * {@link #sendLeased} right after its commit. False while stopping or when as many sends as allowed are under way
     * (then it waits for a claim like any other).
     */
    boolean takesLeased() {
        return running && !drain.draining() && inFlight.get() < config.maxInFlight();
    }

    /**
     * Sends deliveries whose committed transaction leased them to this replica. Their outcomes are written like those
     * of claimed ones; should this replica die first, their lease runs out and any replica claims them.
     */
    void sendLeased(List<Claimed> deliveries) {
        // A lease runs from the row's insert (clock_timestamp(), not the transaction's start), but a long transaction
        // may still have used up most of it before its commit; one sent with too little of it left could have its
        // lease run out before the outcome is written, and be claimed and sent again. Those wait for their lease to end
        // and are claimed then, with a lease of their own.
        long needed = System.currentTimeMillis() + config.requestTimeout().toMillis() + OUTCOME_MARGIN_MILLIS;
        boolean waiting = false;
        for (Claimed delivery : deliveries) {
            if (delivery.leasedUntil().toInstant().toEpochMilli() >= needed) {
                dispatch(delivery);
            } else {
                waiting = true;
            }
        }
        if (waiting) {
            LOG.debug("Deliveries whose lease was mostly used by their transaction are sent after it, by a claim");
        }
    }

    private void dispatch(Claimed delivery) {
        long attemptedAt = System.currentTimeMillis();
        String refusal = delivery.refusal() != null ? "Not sent, and the automation was disabled: " + delivery.refusal()
                : !delivery.enabled() ? "The webhook is disabled; the delivery was not sent"
                        : delivery.accessTokenSecret() != null && delivery.accessToken() == null
                                ? "The access token secret " + delivery.accessTokenSecret() + " no longer exists"
                                : delivery.signingSecret() != null && delivery.signingKey() == null
                                        ? "The signing secret " + delivery.signingSecret() + " no longer exists"
                                        : null;
        if (refusal != null) {
            outcomes.add(new Sent(delivery, Outcome.failure(refusal, 0), attemptedAt));
            unpark();
            return;
        }
        inFlight.incrementAndGet();
        sending.add(delivery);
        Outgoing outgoing = delivery.slack()
                ? Outgoing.slack("msg_" + delivery.id(), config.slackPostMessageUrl(),
                        Notification.toChannel(delivery.body(), delivery.slackChannel()), delivery.accessToken())
                : new Outgoing("msg_" + delivery.id(), delivery.url(), delivery.body(), delivery.accessToken(),
                        delivery.signingKey());
        sender.send(outgoing).whenComplete((outcome, error) -> {
            outcomes.add(new Sent(delivery,
                    outcome != null ? outcome
                            : Outcome.failure(WebhookSender.describe(error), System.currentTimeMillis() - attemptedAt),
                    attemptedAt));
            sending.remove(delivery);
            inFlight.decrementAndGet();
            unpark();
        });
    }

    /** Writes the outcomes that arrived, in one transaction; true when there may be more. */
    private boolean writeOutcomes() {
        List<Attempted> batch = new ArrayList<>();
        List<Long> gone = new ArrayList<>();
        Map<Long, String> refusedAutomations = new HashMap<>();
        for (Sent sent; batch.size() < 1000 && (sent = outcomes.poll()) != null;) {
            Claimed d = sent.delivery();
            Outcome o = sent.outcome();
            String state;
            long delay = 0;
            if (d.refusal() != null) {
                state = "failed";
                refusedAutomations.put(d.automationId(), d.refusal());
            } else if (o.succeeded()) {
                state = "succeeded";
            } else if (o.permanent()) {
                state = "failed"; // an answer that another attempt would not change (Slack's invalid_auth ...)
            } else if (o.status() != null && o.status() == 410 && !d.slack() || !d.enabled()) {
                // 410 Gone disables a webhook (a Slack integration has no `enabled` to set again: retried instead)
                state = "failed";
                if (d.enabled()) {
                    gone.add(d.webhookId());
                    metrics.disabledByGone();
                }
            } else {
                Duration next = nextDelay(d.cycleAttempt(), o.retryAfter());
                state = next == null ? "failed" : "pending";
                delay = next == null ? 0 : next.toMillis();
                if (next != null) {
                    earliestRetry.accumulateAndGet(System.currentTimeMillis() + delay, Math::min);
                }
            }
            batch.add(new Attempted(d, o, sent.attemptedAtMillis(), state, delay));
            metrics.delivery(state, o, d.createdAt());
        }
        if (batch.isEmpty()) {
            return false;
        }
        queue.record(batch, gone, refusedAutomations);
        return !outcomes.isEmpty();
    }

    /** The delay before the next attempt of this cycle, or null when {@code cycleAttempt} was the last. */
    Duration nextDelay(int cycleAttempt, Duration retryAfter) {
        List<Duration> schedule = config.retrySchedule();
        if (cycleAttempt >= schedule.size()) {
            return null;
        }
        if (retryAfter != null) {
            return retryAfter.compareTo(config.maxRetryAfter()) > 0 ? config.maxRetryAfter() : retryAfter;
        }
        long base = schedule.get(cycleAttempt).toMillis();
        double jitter = config.retryJitter();
        double factor = jitter <= 0 ? 1 : 1 + ThreadLocalRandom.current().nextDouble(-jitter, jitter);
        return Duration.ofMillis(Math.round(base * factor));
    }
}
