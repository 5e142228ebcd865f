package dev.fulcrum.automations;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Status;
import jakarta.transaction.Synchronization;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;
import jakarta.transaction.Transactional.TxType;

import org.hibernate.Session;

import dev.fulcrum.automations.DeliveryQueue.Claimed;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;
import dev.fulcrum.platform.QueryParams;

/**
 * The webhook delivery outbox and its log. {@link #enqueue} writes a delivery in the transaction of the change that
 * caused it, so a delivery exists exactly when its change committed; after the commit the dispatcher of this replica is
 * woken ({@link DeliveryDispatcher}), other replicas find it by polling. The log is read per webhook or per automation;
 * the callers check permissions.
 */
@ApplicationScoped
public class WebhookDeliveries {

    public static final int DEFAULT_PAGE = 50;
    public static final int MAX_PAGE = 500;

    /** The states of a delivery. */
    public enum State {
        PENDING, SUCCEEDED, FAILED;

        public String value() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** One attempt to send a delivery: no status when the endpoint was not reached (then {@code error} says why). */
    public record Attempt(int attempt, OffsetDateTime attemptedAt, Integer status, int latencyMs, String responseBody,
            String error) {
    }

    /** A delivery with its attempts, oldest attempt first. {@code nextAttemptAt} is null once it is final. */
    public record Delivery(long id, long webhookId, Long automationId, Long eventId, State state, int attemptCount,
            OffsetDateTime createdAt, OffsetDateTime nextAttemptAt, OffsetDateTime completedAt,
            List<Attempt> attempts) {
    }

    /** A page of deliveries, newest first; pass {@code nextBefore} as {@code before} for the next page. */
    public record DeliveryPage(List<Delivery> deliveries, Long nextBefore) {
    }

    private static final Object WAKE_KEY = new Object();
    private static final Object LEASED_KEY = new Object();

    @Inject
    EntityManager em;

    @Inject
    DeliveryQueue queue;

    @Inject
    DeliveryDispatcher dispatcher;

    @Inject
    TransactionSynchronizationRegistry transactions;

    /**
     * Queues {@code body} (the exact request body, already rendered) for the webhook, in the caller's transaction
     * ({@code MANDATORY}): the delivery exists if and only if that transaction commits, and is sent right after the
     * commit. {@code automationId} and {@code eventId} are kept for the log (no foreign key here); the delivery of an
     * automation is sent only while the user it acts for has the rights it needs ({@link AutomationRights}). The body
     * is stored sealed, since it may hold secret values. Returns the delivery id; the request's {@code webhook-id}
     * header is {@code msg_<id>}.
     * <p>
     * When the first attempt is due at once and this replica's dispatcher has room, the row is written already leased
     * to this replica, together with what sending needs, and the dispatcher sends it as soon as the transaction
     * commits: no claim stands between an event and its delivery. A crash before the outcome is written only lets the
     * lease run out, after which any replica claims the row.
     */
    @Transactional(TxType.MANDATORY)
    public long enqueue(long webhookId, Long automationId, Long eventId, String body) {
        return enqueue(webhookId, automationId, eventId, body, Map.of());
    }

    /**
     * {@link #enqueue(long, Long, Long, String)} for a body rendered with {@code secrets} (name to value): they are
     * kept with the delivery, sealed like the body, so that every attempt replaces them in what the endpoint answers by
     * {@code [secret NAME]} before it is stored ({@link SecretMask}).
     */
    @Transactional(TxType.MANDATORY)
    public long enqueue(long webhookId, Long automationId, Long eventId, String body, Map<String, String> secrets) {
        long delay = queue.firstDelayMillis();
        if (delay == 0 && dispatcher.takesLeased()) {
            Claimed delivery = queue.insertLeased(webhookId, automationId, eventId, body, secrets);
            sendAfterCommit(delivery);
            return delivery.id();
        }
        long id = queue.insert(webhookId, automationId, eventId, body, secrets, delay);
        wakeAfterCommit();
        return id;
    }

    /** The deliveries of a webhook, newest first, optionally only those in {@code state} (pending|succeeded|failed). */
    @Transactional
    public DeliveryPage listByWebhook(long webhookId, String state, Integer limit, Long before) {
        return page("webhook_id", webhookId, state, limit, before);
    }

    /** The deliveries an automation caused, newest first, optionally only those in {@code state}. */
    @Transactional
    public DeliveryPage listByAutomation(long automationId, String state, Integer limit, Long before) {
        return page("automation_id", automationId, state, limit, before);
    }

    /** Sends a delivery of the webhook again with a fresh retry schedule; 404 when it is not one of its deliveries. */
    @Transactional
    public Delivery redeliverOfWebhook(long webhookId, long deliveryId) {
        return redeliver("webhook_id", webhookId, deliveryId);
    }

    /** Sends a delivery of the automation again with a fresh retry schedule; 404 when it is not one of its. */
    @Transactional
    public Delivery redeliverOfAutomation(long automationId, long deliveryId) {
        return redeliver("automation_id", automationId, deliveryId);
    }

    /** Sends again every failed delivery of the webhook created at or after {@code since}; how many. */
    @Transactional
    public int redeliverFailedOfWebhook(long webhookId, OffsetDateTime since) {
        return redeliverFailed("webhook_id", webhookId, since);
    }

    /** Sends again every failed delivery of the automation created at or after {@code since}; how many. */
    @Transactional
    public int redeliverFailedOfAutomation(long automationId, OffsetDateTime since) {
        return redeliverFailed("automation_id", automationId, since);
    }

    private Delivery redeliver(String column, long scopeId, long deliveryId) {
        requireEnabledWebhook(column, scopeId, deliveryId);
        if (!queue.requeue(column, scopeId, deliveryId)) {
            throw ApiException.notFound("Delivery " + deliveryId + " not found");
        }
        wakeAfterCommit();
        return select("d.id = ?", List.of(deliveryId), 1).get(0);
    }

    private void requireEnabledWebhook(String column, long scopeId, long deliveryId) {
        List<?> rows = em.createNativeQuery("""
                select w.enabled, w.name from webhook_deliveries d join webhooks w on w.id = d.webhook_id
                where d.id = ?1 and d.%s = ?2""".formatted(column)).setParameter(1, deliveryId).setParameter(2, scopeId)
                .getResultList();
        if (rows.isEmpty()) {
            throw ApiException.notFound("Delivery " + deliveryId + " not found");
        }
        Object[] row = (Object[]) rows.get(0);
        if (!(Boolean) row[0]) {
            throw ApiException.conflict("Webhook " + row[1] + " is disabled; enable it before redelivering");
        }
    }

    private int redeliverFailed(String column, long scopeId, OffsetDateTime since) {
        if (since == null) {
            throw ApiException.invalid(Violation.of("since is required", "missing", "query", "since"));
        }
        int updated = queue.requeueFailed(column, scopeId, since);
        if (updated > 0) {
            wakeAfterCommit();
        }
        return updated;
    }

    private DeliveryPage page(String column, long scopeId, String state, Integer limit, Long before) {
        int size = QueryParams.limit(limit, DEFAULT_PAGE, 1, MAX_PAGE);
        State wanted = state(state);
        List<Object> params = new ArrayList<>(List.of(scopeId, before == null ? Long.MAX_VALUE : before));
        String where = "d.%s = ? and d.id < ?".formatted(column);
        if (wanted != null) {
            where += " and d.state = ?";
            params.add(wanted.value());
        }
        List<Delivery> found = select(where + " order by d.id desc", params, size + 1);
        if (found.size() > size) {
            found.remove(size);
            return new DeliveryPage(found, found.get(size - 1).id());
        }
        return new DeliveryPage(found, null);
    }

    private static State state(String state) {
        if (state == null || state.isEmpty()) {
            return null;
        }
        for (State s : State.values()) {
            if (s.value().equals(state)) {
                return s;
            }
        }
        throw ApiException
                .invalid(Violation.of("state is one of pending, succeeded, failed", "enum", "query", "state"));
    }

    private List<Delivery> select(String where, List<Object> params, int limit) {
        return em.unwrap(Session.class).doReturningWork(connection -> {
            Map<Long, Delivery> deliveries = new LinkedHashMap<>();
            try (PreparedStatement query = connection.prepareStatement("""
                    select d.id, d.webhook_id, d.automation_id, d.event_id, d.state, d.attempts, d.created_at,
                           case when d.state = 'pending' then d.next_attempt_at end, d.completed_at
                    from webhook_deliveries d where %s limit ?""".formatted(where))) {
                int i = 1;
                for (Object param : params) {
                    query.setObject(i++, param);
                }
                query.setInt(i, limit);
                try (ResultSet rs = query.executeQuery()) {
                    while (rs.next()) {
                        long id = rs.getLong(1);
                        deliveries.put(id,
                                new Delivery(id, rs.getLong(2), (Long) rs.getObject(3), (Long) rs.getObject(4),
                                        State.valueOf(rs.getString(5).toUpperCase(Locale.ROOT)), rs.getInt(6),
                                        rs.getObject(7, OffsetDateTime.class), rs.getObject(8, OffsetDateTime.class),
                                        rs.getObject(9, OffsetDateTime.class), new ArrayList<>()));
                    }
                }
            }
            attempts(connection, deliveries);
            return new ArrayList<>(deliveries.values());
        });
    }

    private static void attempts(Connection connection, Map<Long, Delivery> deliveries) throws SQLException {
        if (deliveries.isEmpty()) {
            return;
        }
        try (PreparedStatement query = connection.prepareStatement("""
                select delivery_id, attempt, attempted_at, status, latency_ms, response_body, error
                from webhook_attempts where delivery_id = any (?) order by delivery_id, attempt""")) {
            query.setArray(1, connection.createArrayOf("bigint", deliveries.keySet().toArray()));
            try (ResultSet rs = query.executeQuery()) {
                while (rs.next()) {
                    deliveries.get(rs.getLong(1)).attempts()
                            .add(new Attempt(rs.getInt(2), rs.getObject(3, OffsetDateTime.class),
                                    (Integer) rs.getObject(4), rs.getInt(5), rs.getString(6), rs.getString(7)));
                }
            }
        }
    }

    /** Hands the deliveries leased in the current transaction to the dispatcher once it has committed. */
    @SuppressWarnings("unchecked")
    private void sendAfterCommit(Claimed delivery) {
        List<Claimed> leased = (List<Claimed>) transactions.getResource(LEASED_KEY);
        if (leased != null) {
            leased.add(delivery);
            return;
        }
        List<Claimed> first = new ArrayList<>(List.of(delivery));
        transactions.putResource(LEASED_KEY, first);
        afterCommit(() -> dispatcher.sendLeased(first));
    }

    /** Wakes this replica's dispatcher once the current transaction has committed (once per transaction). */
    private void wakeAfterCommit() {
        if (transactions.getResource(WAKE_KEY) != null) {
            return;
        }
        transactions.putResource(WAKE_KEY, Boolean.TRUE);
        afterCommit(dispatcher::wake);
    }

    /** Runs {@code action} when the current transaction has committed; not at all when it rolls back. */
    private void afterCommit(Runnable action) {
        transactions.registerInterposedSynchronization(new Synchronization() {
            @Override
            public void beforeCompletion() {
            }

            @Override
            public void afterCompletion(int status) {
                if (status == Status.STATUS_COMMITTED) {
                    action.run();
                }
            }
        });
    }
}
