package dev.fulcrum.automations;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Queue;
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
import jakarta.persistence.EntityManager;

import org.hibernate.Session;
import org.jboss.logging.Logger;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.runtime.StartupEvent;
import io.quarkus.scheduler.Scheduled;

import dev.fulcrum.automations.WebhookSender.Outcome;
import dev.fulcrum.automations.WebhookSender.Outgoing;
import dev.fulcrum.platform.SecretCipher;

/**
 * Sends due deliveries. One thread per replica claims due rows in batches ({@code FOR UPDATE SKIP LOCKED} in a short
 * transaction that moves them to the end of a lease), hands each to the non-blocking {@link WebhookSender}, and writes
 * the outcomes back in batches. It sleeps until woken: by a commit that queued deliveries in this replica, by an
 * outcome, by the earliest retry it scheduled itself, or by the scheduler's poll (which finds what other replicas
 * queued, and rows whose claimer died: their lease ran out). A delivery is never lost: until its outcome is written,
 * its row is pending and becomes due again when the lease ends.
 */
@ApplicationScoped
public class DeliveryDispatcher {

    private static final Logger LOG = Logger.getLogger(DeliveryDispatcher.class);
    private static final int MAX_ERROR = 1000;

    @Inject
    WebhooksConfig config;

    @Inject
    WebhookSender sender;

    @Inject
    SecretCipher cipher;

    @Inject
    EntityManager em;

    /** A claim is wanted: set by commits, redeliveries and the poll. */
    private final AtomicBoolean woken = new AtomicBoolean(true);
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicLong earliestRetry = new AtomicLong(Long.MAX_VALUE);
    private final Queue<Sent> outcomes = new ConcurrentLinkedQueue<>();
    private volatile boolean running;
    private volatile Thread thread;

    /**
     * A claimed delivery, ready to send (credentials null when not configured or missing). {@code refusal} says why the
     * user an automation acts for may no longer send it (null when it may, or when the delivery has no automation);
     * {@code mask} hides the secret values it carries in what the endpoint answers.
     */
    record Claimed(long id, long webhookId, int attempt, int cycleAttempt, OffsetDateTime leasedUntil, boolean enabled,
            String body, String url, String accessTokenSecret, String accessToken, String signingSecret,
            String signingKey, Long automationId, String refusal, SecretMask mask) {
        @Override
        public String toString() {
            return "Claimed[" + id + " of webhook " + webhookId + "]";
        }
    }

    private record Sent(Claimed delivery, Outcome outcome, long attemptedAtMillis) {
    }

    void start(@Observes StartupEvent event) {
        if (config.lease().compareTo(config.requestTimeout().plusSeconds(5)) < 0) {
            LOG.warnf("fulcrum.webhooks.lease (%s) should exceed the request timeout (%s) by a few seconds; otherwise a"
                    + " slow attempt may be sent twice", config.lease(), config.requestTimeout());
        }
        running = true;
        thread = new Thread(this::run, "webhook-dispatcher");
        thread.setDaemon(true);
        thread.start();
    }

    void stop(@Observes ShutdownEvent event) throws InterruptedException {
        running = false;
        wake();
        Thread t = thread;
        if (t != null) {
            // let a claim or a write under way finish; what is still in flight is sent again after its lease
            t.join(config.pollInterval().toMillis() + 2_000);
        }
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
                boolean wanted = woken.getAndSet(false);
                if (System.currentTimeMillis() >= earliestRetry.get()) {
                    earliestRetry.set(Long.MAX_VALUE);
                    wanted = true;
                }
                int room = Math.min(config.claimBatch(), config.maxInFlight() - inFlight.get());
                if ((wanted || more) && room > 0) {
                    List<Claimed> claimed = claim(room);
                    claimed.forEach(this::dispatch);
                    more = claimed.size() == room;
                } else if (wanted) {
                    more = true; // no room now: claim once outcomes free some
                }
                writeOutcomes(); // after the claim: new deliveries go out first
                if (!woken.get() && outcomes.isEmpty() && !(more && room > 0)) {
                    long wait = Math.max(1, Math.min(earliestRetry.get() - System.currentTimeMillis(), 60_000));
                    LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(wait));
                }
            } catch (RuntimeException e) {
                LOG.error("Webhook dispatch failed; retrying after the poll interval", e);
                LockSupport.parkNanos(this, config.pollInterval().toNanos());
            }
        }
    }

    /**
     * Claims and outcomes commit without waiting for the WAL flush: one lost to a database crash only makes a delivery
     * due again, and delivery is at least once anyway. The wait would otherwise sit between an event's commit and its
     * sending.
     */
    private static void relaxCommit(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement()) {
            statement.execute("set local synchronous_commit to off");
        }
    }

    /**
     * Completes a CTE {@code leased} (returning id, webhook_id, attempts, cycle_start, leased_until, body,
     * automation_id, secrets) with what sending needs: the webhook's state and URL and its secrets, and whether the
     * user the delivery's automation acts for still has the rights it needs (three left joins on primary keys; the
     * team's name is read only for a refusal), read with {@link #claimed}.
     */
    static final String SELECT_LEASED = """
            select l.id, l.webhook_id, l.attempts, l.cycle_start, l.leased_until, l.body, w.enabled, w.url,
                   w.team_id, w.access_token_secret, t.value, w.signing_secret, s.value, l.secrets,
                   a.id, a.uses_secrets, u.username, m.role,
                   case when a.id is not null and not %s then (select name from entities where id = w.team_id) end
            from leased l join webhooks w on w.id = l.webhook_id
            left join team_secrets t on t.team_id = w.team_id and t.name = w.access_token_secret
            left join team_secrets s on s.team_id = w.team_id and s.name = w.signing_secret
            left join automations a on a.id = l.automation_id
            left join users u on u.id = a.acts_as
            left join entity_members m on m.entity_id = w.team_id and m.user_id = a.acts_as"""
            .formatted(AutomationRights.ENTITLED);

    /**
     * A row of {@link #SELECT_LEASED}; {@code body} and {@code secrets} are the plain body and the secret values it was
     * rendered with when the caller has them, else they are unsealed.
     */
    Claimed claimed(ResultSet rs, String body, Map<String, String> secrets) throws SQLException {
        long id = rs.getLong(1);
        long webhookId = rs.getLong(2);
        int attempts = rs.getInt(3);
        long teamId = rs.getLong(9);
        String tokenName = rs.getString(10);
        String signingName = rs.getString(12);
        byte[] token = rs.getBytes(11);
        byte[] signing = rs.getBytes(13);
        String accessToken = token == null ? null : cipher.open(token, TeamSecrets.context(teamId, tokenName));
        String signingKey = signing == null ? null : cipher.open(signing, TeamSecrets.context(teamId, signingName));
        Map<String, String> sent = new HashMap<>();
        if (secrets != null) {
            sent.putAll(secrets);
        } else {
            byte[] sealedSecrets = rs.getBytes(14);
            if (sealedSecrets != null) {
                sent.putAll(WebhookDeliveries
                        .readSecrets(cipher.open(sealedSecrets, WebhookDeliveries.secretsContext(webhookId))));
            }
        }
        if (accessToken != null) {
            sent.put(tokenName, accessToken);
        }
        if (signingKey != null) {
            sent.put(signingName, signingKey);
        }
        Long automationId = (Long) rs.getObject(15);
        String refusedTeam = rs.getString(19);
        String refusal = refusedTeam == null ? null
                : AutomationRights.refusal(rs.getString(17), rs.getString(18),
                        rs.getBoolean(16) || rs.getBytes(14) != null, refusedTeam);
        return new Claimed(id, webhookId, attempts + 1, attempts + 1 - rs.getInt(4),
                rs.getObject(5, OffsetDateTime.class), rs.getBoolean(7),
                body != null ? body : cipher.open(rs.getBytes(6), WebhookDeliveries.bodyContext(webhookId)),
                rs.getString(8), tokenName, accessToken, signingName, signingKey, automationId, refusal,
                SecretMask.of(sent));
    }

    /** Claims up to {@code max} due deliveries for one lease. */
    List<Claimed> claim(int max) {
        long leaseMillis = config.lease().toMillis();
        return QuarkusTransaction.requiringNew().call(() -> em.unwrap(Session.class).doReturningWork(connection -> {
            relaxCommit(connection);
            List<Claimed> claimed = new ArrayList<>();
            try (PreparedStatement query = connection.prepareStatement("""
                    with due as (
                        select id from webhook_deliveries
                        where state = 'pending' and next_attempt_at <= now()
                        order by next_attempt_at limit ? for update skip locked),
                    leased as (
                        update webhook_deliveries d
                        set leased_until = now() + ? * interval '1 millisecond',
                            next_attempt_at = now() + ? * interval '1 millisecond'
                        from due where d.id = due.id
                        returning d.id, d.webhook_id, d.attempts, d.cycle_start, d.leased_until, d.body,
                                  d.automation_id, d.secrets)
                    """ + SELECT_LEASED)) {
                query.setInt(1, max);
                query.setLong(2, leaseMillis);
                query.setLong(3, leaseMillis);
                try (ResultSet rs = query.executeQuery()) {
                    while (rs.next()) {
                        claimed.add(claimed(rs, null, null));
                    }
                }
            }
            return claimed;
        }));
    }

    /**
     * Whether a delivery queued now may skip the claim: it is then written already leased to this replica and handed to
     * {@link #sendLeased} right after its commit. False while stopping or when as many sends as allowed are under way
     * (then it waits for a claim like any other).
     */
    boolean takesLeased() {
        return running && inFlight.get() < config.maxInFlight();
    }

    /**
     * Sends deliveries whose committed transaction leased them to this replica. Their outcomes are written like those
     * of claimed ones; should this replica die first, their lease runs out and any replica claims them.
     */
    void sendLeased(List<Claimed> deliveries) {
        deliveries.forEach(this::dispatch);
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
        sender.send(new Outgoing("msg_" + delivery.id(), delivery.url(), delivery.body(), delivery.accessToken(),
                delivery.signingKey())).whenComplete((outcome, error) -> {
                    outcomes.add(new Sent(delivery, outcome != null ? outcome
                            : Outcome.failure(WebhookSender.describe(error), System.currentTimeMillis() - attemptedAt),
                            attemptedAt));
                    inFlight.decrementAndGet();
                    unpark();
                });
    }

    /** Writes the outcomes that arrived, in one transaction; true when there may be more. */
    private boolean writeOutcomes() {
        List<Sent> batch = new ArrayList<>();
        for (Sent sent; batch.size() < 1000 && (sent = outcomes.poll()) != null;) {
            batch.add(sent);
        }
        if (batch.isEmpty()) {
            return false;
        }
        QuarkusTransaction.requiringNew().run(() -> em.unwrap(Session.class).doWork(connection -> {
            relaxCommit(connection);
            List<Sent> written = new ArrayList<>(batch.size());
            List<Long> disabled = new ArrayList<>();
            Map<Long, String> refusedAutomations = new HashMap<>();
            try (PreparedStatement update = connection.prepareStatement("""
                    update webhook_deliveries
                    set state = ?, attempts = ?, next_attempt_at = now() + ? * interval '1 millisecond',
                        leased_until = null, completed_at = case when ? = 'pending' then null else now() end
                    where id = ? and state = 'pending' and leased_until = ?""")) {
                for (Sent sent : batch) {
                    Claimed d = sent.delivery();
                    Outcome o = sent.outcome();
                    String state;
                    long delay = 0;
                    if (d.refusal() != null) {
                        state = "failed";
                        refusedAutomations.put(d.automationId(), d.refusal());
                    } else if (o.succeeded()) {
                        state = "succeeded";
                    } else if (o.status() != null && o.status() == 410 || !d.enabled()) {
                        state = "failed";
                        if (d.enabled()) {
                            disabled.add(d.webhookId());
                        }
                    } else {
                        Duration next = nextDelay(d.cycleAttempt(), o.retryAfter());
                        state = next == null ? "failed" : "pending";
                        delay = next == null ? 0 : next.toMillis();
                        if (next != null) {
                            earliestRetry.accumulateAndGet(System.currentTimeMillis() + delay, Math::min);
                        }
                    }
                    update.setString(1, state);
                    update.setInt(2, d.attempt());
                    update.setLong(3, delay);
                    update.setString(4, state);
                    update.setLong(5, d.id());
                    update.setObject(6, d.leasedUntil());
                    update.addBatch();
                }
                int[] counts = update.executeBatch();
                for (int i = 0; i < counts.length; i++) {
                    if (counts[i] > 0) {
                        written.add(batch.get(i));
                    }
                }
            }
            try (PreparedStatement insert = connection.prepareStatement("""
                    insert into webhook_attempts
                        (delivery_id, attempt, attempted_at, status, latency_ms, response_body, error)
                    values (?, ?, ?, ?, ?, ?, ?) on conflict do nothing""")) {
                for (Sent sent : written) {
                    Outcome o = sent.outcome();
                    SecretMask mask = sent.delivery().mask();
                    String body = mask.apply(o.body(), o.bodyTruncated());
                    String error = mask.apply(o.error(), false);
                    insert.setLong(1, sent.delivery().id());
                    insert.setInt(2, sent.delivery().attempt());
                    insert.setTimestamp(3, new Timestamp(sent.attemptedAtMillis()));
                    insert.setObject(4, o.status());
                    insert.setInt(5, (int) Math.min(Integer.MAX_VALUE, o.latencyMs()));
                    insert.setString(6, body == null ? null : body.replace("\u0000", ""));
                    insert.setString(7,
                            error == null ? null : error.length() > MAX_ERROR ? error.substring(0, MAX_ERROR) : error);
                    insert.addBatch();
                }
                insert.executeBatch();
            }
            if (!disabled.isEmpty()) {
                try (PreparedStatement disable = connection.prepareStatement("""
                        update webhooks set enabled = false, updated_at = now(),
                        disabled_reason = 'The endpoint answered 410 Gone at ' || now()::text
                        where id = any (?) and enabled""")) {
                    disable.setArray(1, connection.createArrayOf("bigint", disabled.toArray()));
                    disable.executeUpdate();
                }
            }
            if (!refusedAutomations.isEmpty()) {
                try (PreparedStatement disable = connection.prepareStatement("""
                        update automations set enabled = false, disabled_reason = ?, updated_at = now()
                        where id = ? and enabled""")) {
                    for (Map.Entry<Long, String> refused : refusedAutomations.entrySet()) {
                        disable.setString(1, refused.getValue());
                        disable.setLong(2, refused.getKey());
                        disable.addBatch();
                    }
                    disable.executeBatch();
                }
            }
        }));
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
