package dev.fulcrum.automations;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
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

import io.quarkus.panache.common.Parameters;
import io.quarkus.panache.common.Sort;

import dev.fulcrum.automations.DeliveryQueue.Claimed;
import dev.fulcrum.automations.DeliveryQueue.Queued;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;

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
        return enqueueAll(List.of(new Queued(webhookId, automationId, eventId, body, secrets))).get(0);
    }

    /** Queues the deliveries like {@link #enqueue}, all in one statement (those of one event); their ids. */
    List<Long> enqueueAll(List<Queued> deliveries) {
        long delay = queue.firstDelayMillis();
        if (delay == 0 && dispatcher.takesLeased()) {
            List<Claimed> leased = queue.insertLeased(deliveries);
            sendAfterCommit(leased);
            return leased.stream().map(Claimed::id).toList();
        }
        List<Long> ids = queue.insert(deliveries, delay);
        wakeAfterCommit();
        return ids;
    }

    /**
     * The deliveries of a webhook, newest first, optionally only those in {@code state} (pending|succeeded|failed) and
     * those created at or after {@code createdSince}.
     */
    @Transactional
    public DeliveryPage listByWebhook(long webhookId, String state, Integer limit, Long before,
            OffsetDateTime createdSince) {
        return page("webhook_id", webhookId, state, limit, before, createdSince);
    }

    /** The deliveries of a webhook, newest first, optionally only those in {@code state}. */
    @Transactional
    public DeliveryPage listByWebhook(long webhookId, String state, Integer limit, Long before) {
        return listByWebhook(webhookId, state, limit, before, null);
    }

    /** The deliveries an automation caused, newest first, optionally only those in {@code state}. */
    @Transactional
    public DeliveryPage listByAutomation(long automationId, String state, Integer limit, Long before) {
        return listByAutomation(automationId, state, limit, before, null);
    }

    /** The deliveries an automation caused, newest first, optionally filtered as {@link #listByWebhook}. */
    @Transactional
    public DeliveryPage listByAutomation(long automationId, String state, Integer limit, Long before,
            OffsetDateTime createdSince) {
        return page("automation_id", automationId, state, limit, before, createdSince);
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
        WebhookDelivery requeued = WebhookDelivery.findById(deliveryId);
        em.refresh(requeued); // the queue changed the row
        return deliveries(List.of(requeued)).get(0);
    }

    private void requireEnabledWebhook(String column, long scopeId, long deliveryId) {
        WebhookDelivery delivery = WebhookDelivery.findById(deliveryId);
        if (delivery == null || !inScope(delivery, column, scopeId)) {
            throw ApiException.notFound("Delivery " + deliveryId + " not found");
        }
        TeamWebhook webhook = TeamWebhook.findById(delivery.webhookId);
        if (!webhook.enabled) {
            throw ApiException.conflict("Webhook " + webhook.name + " is disabled; enable it before redelivering");
        }
    }

    private static boolean inScope(WebhookDelivery delivery, String column, long scopeId) {
        return column.equals("webhook_id") ? delivery.webhookId == scopeId
                : delivery.automationId != null && delivery.automationId == scopeId;
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

    private DeliveryPage page(String column, long scopeId, String state, Integer limit, Long before,
            OffsetDateTime createdSince) {
        int size = QueryParams.limit(limit, DEFAULT_PAGE, 1, MAX_PAGE);
        State wanted = state(state);
        Parameters params = Parameters.with("scope", scopeId).and("before", before == null ? Long.MAX_VALUE : before);
        String query = (column.equals("webhook_id") ? "webhookId" : "automationId") + " = :scope and id < :before";
        if (wanted != null) {
            query += " and state = :state";
            params.and("state", wanted.value());
        }
        if (createdSince != null) {
            query += " and createdAt >= :since";
            params.and("since", createdSince);
        }
        List<Delivery> found = deliveries(
                WebhookDelivery.<WebhookDelivery> find(query, Sort.descending("id"), params).page(0, size + 1).list());
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

    /** The deliveries with their attempts, oldest attempt first. */
    private static List<Delivery> deliveries(List<WebhookDelivery> rows) {
        Map<Long, List<Attempt>> attempts = new HashMap<>();
        if (!rows.isEmpty()) {
            List<WebhookAttempt> found = WebhookAttempt.list("deliveryId in ?1", Sort.by("deliveryId").and("attempt"),
                    rows.stream().map(d -> d.id).toList());
            for (WebhookAttempt a : found) {
                attempts.computeIfAbsent(a.deliveryId, id -> new ArrayList<>())
                        .add(new Attempt(a.attempt, a.attemptedAt, a.status, a.latencyMs, a.responseBody, a.error));
            }
        }
        List<Delivery> deliveries = new ArrayList<>(rows.size());
        for (WebhookDelivery d : rows) {
            State state = State.valueOf(d.state.toUpperCase(Locale.ROOT));
            deliveries.add(new Delivery(d.id, d.webhookId, d.automationId, d.eventId, state, d.attempts, d.createdAt,
                    state == State.PENDING ? d.nextAttemptAt : null, d.completedAt,
                    attempts.getOrDefault(d.id, new ArrayList<>())));
        }
        return deliveries;
    }

    /** Hands the deliveries leased in the current transaction to the dispatcher once it has committed. */
    @SuppressWarnings("unchecked")
    private void sendAfterCommit(List<Claimed> deliveries) {
        List<Claimed> leased = (List<Claimed>) transactions.getResource(LEASED_KEY);
        if (leased != null) {
            leased.addAll(deliveries);
            return;
        }
        List<Claimed> first = new ArrayList<>(deliveries);
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
