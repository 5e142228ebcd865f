package dev.fulcrum.automations;

import java.time.OffsetDateTime;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.database.NativeSql.Row;

/**
 * The SQL of the delivery outbox ({@link DeliveryQueue}, which keeps the transactions, seals bodies and secrets and
 * reads the rows): queuing deliveries from arrays, claiming due ones with {@code FOR UPDATE SKIP LOCKED}, writing what
 * their attempts came to in one statement per table (from {@code unnest}), releasing and requeuing them.
 */
@ApplicationScoped
class DeliveryStatements {

    /**
     * Completes a CTE {@code leased} (returning id, webhook_id, attempts, cycle_start, leased_until, body,
     * automation_id, secrets, created_at) with what sending needs: the webhook's state, URL, kind (and a Slack
     * integration's channel, read when sending so that a changed channel holds for deliveries already queued) and its
     * secrets, and whether the user the delivery's automation acts for still has the rights it needs (three left joins
     * on primary keys; the team's name is read only for a refusal), read with {@link DeliveryQueue}{@code .claimed}.
     */
    private static final String SELECT_LEASED = """
            select l.id, l.webhook_id, l.attempts, l.cycle_start, l.leased_until, l.body, w.enabled, w.url,
                   w.team_id, w.access_token_secret, t.value, w.signing_secret, s.value, l.secrets,
                   a.id, a.uses_secrets, u.username, m.role,
                   case when a.id is not null and not %s then (select name from entity_names where entity_id = w.team_id) end,
                   l.created_at, w.kind, w.slack_channel
            from leased l join webhooks w on w.id = l.webhook_id
            left join team_secrets t on t.team_id = w.team_id and t.name = w.access_token_secret
            left join team_secrets s on s.team_id = w.team_id and s.name = w.signing_secret
            left join automations a on a.id = l.automation_id
            left join account_names u on u.user_id = a.acts_as
            left join effective_roles m on m.entity_id = w.team_id and m.user_id = a.acts_as"""
            .formatted(AutomationRights.ENTITLED);

    /**
     * The deliveries to queue, from arrays (parameters 1 to 5, see {@link Queued}) in the order given, so that their
     * ids, drawn as the rows are inserted, follow that order.
     */
    private static final String QUEUED = """
            from unnest(cast(?1 as bigint[]), cast(?2 as bigint[]), cast(?3 as bigint[]), cast(?4 as text[]),
                        cast(?5 as text[])) with ordinality as v(w, a, e, b, s, i)
            order by i""";

    private static final String INSERT = """
            insert into webhook_deliveries (webhook_id, automation_id, event_id, body, secrets, next_attempt_at)
            select w, a, e, decode(b, 'base64'), decode(s, 'base64'), now() + ?6 * interval '1 millisecond'
            """ + QUEUED + " returning id";

    private static final String INSERT_LEASED = """
            with leased as (
                insert into webhook_deliveries
                    (webhook_id, automation_id, event_id, body, secrets, next_attempt_at, leased_until)
                select w, a, e, decode(b, 'base64'), decode(s, 'base64'),
                       clock_timestamp() + ?6 * interval '1 millisecond',
                       clock_timestamp() + ?6 * interval '1 millisecond'
            """ + QUEUED + """

                returning id, webhook_id, attempts, cycle_start, leased_until, body, automation_id, secrets, created_at)
            """ + SELECT_LEASED;

    private static final String CLAIM = """
            with due as (
                select id from webhook_deliveries
                where state = 'pending' and next_attempt_at <= now()
                order by next_attempt_at limit ?1 for update skip locked),
            leased as (
                update webhook_deliveries d
                set leased_until = now() + ?2 * interval '1 millisecond',
                    next_attempt_at = now() + ?2 * interval '1 millisecond'
                from due where d.id = due.id
                returning d.id, d.webhook_id, d.attempts, d.cycle_start, d.leased_until, d.body,
                          d.automation_id, d.secrets, d.created_at)
            """ + SELECT_LEASED;

    @Inject
    EntityManager em;

    /**
     * Deliveries to queue as arrays, one element per delivery in the order given: the bodies and secrets sealed, in
     * base64 (secrets null when none).
     */
    record Queued(Long[] webhooks, Long[] automations, Long[] events, String[] bodies, String[] secrets) {

        private Object[] parameters(long delayMillis) {
            return new Object[] { webhooks, automations, events, bodies, secrets, delayMillis };
        }
    }

    /**
     * Queues the deliveries, their first attempts due after {@code delayMillis}; their ids (in no particular order).
     */
    List<Long> insert(Queued deliveries, long delayMillis) {
        return NativeSql.list(em, INSERT, row -> row.longValue(0), deliveries.parameters(delayMillis));
    }

    /**
     * Queues the deliveries already leased for {@code leaseMillis}; the rows of {@link #SELECT_LEASED} (in no
     * particular order).
     */
    List<Row> insertLeased(Queued deliveries, long leaseMillis) {
        return NativeSql.list(em, INSERT_LEASED, row -> row, deliveries.parameters(leaseMillis));
    }

    /** Leases up to {@code max} due deliveries for {@code leaseMillis}; the rows of {@link #SELECT_LEASED}. */
    List<Row> claim(int max, long leaseMillis) {
        return NativeSql.list(em, CLAIM, row -> row, max, leaseMillis);
    }

    /**
     * Moves each delivery still pending under the lease given to its next state and attempt count (pending ones due
     * again after their delay) and out of its lease; the (1-based) positions of those written.
     */
    List<Integer> finish(Long[] ids, Integer[] counts, String[] states, Long[] delays, String[] leases) {
        return NativeSql.list(em,
                """
                        update webhook_deliveries d
                        set state = v.state, attempts = v.attempts, next_attempt_at = now() + v.delay * interval '1 millisecond',
                            leased_until = null, completed_at = case when v.state = 'pending' then null else now() end
                        from unnest(cast(?1 as bigint[]), cast(?2 as int[]), cast(?3 as text[]), cast(?4 as bigint[]),
                                    cast(?5 as timestamptz[])) with ordinality as v(id, attempts, state, delay, lease, i)
                        where d.id = v.id and d.state = 'pending' and d.leased_until = v.lease
                        returning v.i""",
                row -> row.intValue(0), ids, counts, states, delays, leases);
    }

    /** Disables the enabled ones of the webhooks, whose endpoint answered 410 Gone. */
    void disableGoneWebhooks(Long[] webhookIds) {
        NativeSql.update(em, """
                update webhooks set enabled = false, updated_at = now(),
                disabled_reason = 'The endpoint answered 410 Gone at ' || now()::text
                where id = any (cast(?1 as bigint[])) and enabled""", (Object) webhookIds);
    }

    /** Disables the enabled ones of the automations, each for its reason. */
    void disableAutomations(Long[] automationIds, String[] reasons) {
        NativeSql.update(em, """
                update automations a set enabled = false, disabled_reason = v.reason, updated_at = now()
                from unnest(cast(?1 as bigint[]), cast(?2 as text[])) as v(id, reason)
                where a.id = v.id and a.enabled""", automationIds, reasons);
    }

    /** Releases the deliveries still pending under the lease given, due at once; how many. */
    int release(Long[] ids, String[] leases) {
        return NativeSql.update(em, """
                update webhook_deliveries d set leased_until = null, next_attempt_at = now()
                from unnest(cast(?1 as bigint[]), cast(?2 as timestamptz[])) as v(id, lease)
                where d.id = v.id and d.state = 'pending' and d.leased_until = v.lease""", ids, leases);
    }

    /** Records attempts (times in epoch milliseconds), each once. */
    void insertAttempts(Long[] ids, Integer[] numbers, Long[] times, Integer[] statuses, Integer[] latencies,
            String[] bodies, String[] errors) {
        NativeSql.update(em,
                """
                        insert into webhook_attempts (delivery_id, attempt, attempted_at, status, latency_ms, response_body, error)
                        select id, attempt, timestamptz 'epoch' + at * interval '1 millisecond', status, latency, body, error
                        from unnest(cast(?1 as bigint[]), cast(?2 as int[]), cast(?3 as bigint[]), cast(?4 as int[]),
                                    cast(?5 as int[]), cast(?6 as text[]), cast(?7 as text[]))
                             as v(id, attempt, at, status, latency, body, error)
                        on conflict do nothing""",
                ids, numbers, times, statuses, latencies, bodies, errors);
    }

    /**
     * Queues a delivery of the scope ({@code column} = {@code webhook_id} or {@code automation_id}) again, now and with
     * a fresh retry cycle; whether it was one of the scope's.
     */
    boolean requeue(String column, long scopeId, long deliveryId) {
        return NativeSql.update(em, """
                update webhook_deliveries set state = 'pending', cycle_start = attempts, next_attempt_at = now(),
                leased_until = null, completed_at = null where id = ?1 and %s = ?2""".formatted(column), deliveryId,
                scopeId) > 0;
    }

    /**
     * Queues every failed delivery of the scope created at or after {@code since} again, now and with a fresh retry
     * cycle, when its webhook is enabled; how many.
     */
    int requeueFailed(String column, long scopeId, OffsetDateTime since) {
        return NativeSql.update(em, """
                update webhook_deliveries d set state = 'pending', cycle_start = attempts, next_attempt_at = now(),
                leased_until = null, completed_at = null
                from webhooks w
                where w.id = d.webhook_id and w.enabled and d.%s = ?1 and d.state = 'failed' and d.created_at >= ?2"""
                .formatted(column), scopeId, since);
    }

    /** Lets the current transaction commit without waiting for the WAL flush. */
    void relaxCommit() {
        NativeSql.update(em, "set local synchronous_commit to off");
    }
}
