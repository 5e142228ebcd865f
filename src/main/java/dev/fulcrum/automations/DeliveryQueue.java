package dev.fulcrum.automations;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.quarkus.narayana.jta.QuarkusTransaction;

import dev.fulcrum.automations.WebhookSender.Outcome;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.platform.database.NativeSql.Row;

/**
 * The delivery outbox as a queue: queuing a delivery (written already leased to this replica when it is sent at once),
 * claiming due ones, writing what their attempts came to (lease release, attempt, retry) and queuing them again. Native
 * SQL ({@link DeliveryStatements}) because this is the measured hot path of webhooks (bench/webhooks.sh): a claim locks
 * due rows with {@code FOR UPDATE SKIP LOCKED}, moves them to the end of a lease and reads what sending needs in one
 * statement, and the outcomes of a batch are written in one statement per table (from {@code unnest}).
 * <p>
 * A row is due when it is pending and its {@code next_attempt_at} has passed; a lease moves {@code next_attempt_at} to
 * its end, so the row of a claimer that died becomes due again by itself. {@code leased_until} names the lease: an
 * outcome is written only while its row is still pending under the same lease. The body and the secret values it was
 * rendered with are stored sealed.
 */
@ApplicationScoped
class DeliveryQueue {

    private static final int MAX_ERROR = 1000;
    private static final ObjectMapper SECRETS_JSON = new ObjectMapper();

    @Inject
    DeliveryStatements statements;

    @Inject
    SecretCipher cipher;

    @Inject
    WebhooksConfig config;

    /**
     * A leased delivery, ready to send (credentials null when not configured or missing). {@code refusal} says why the
     * user an automation acts for may no longer send it (null when it may, or when the delivery has no automation);
     * {@code mask} hides the secret values it carries in what the endpoint answers. {@code slackChannel}: for a
     * notification of a Slack integration (else null), the integration's channel now; it is posted there, to Slack's
     * {@code chat.postMessage}, with the integration's bot token.
     */
    record Claimed(long id, long webhookId, int attempt, int cycleAttempt, OffsetDateTime leasedUntil, boolean enabled,
            String body, String url, String accessTokenSecret, String accessToken, String signingSecret,
            String signingKey, Long automationId, String refusal, SecretMask mask, OffsetDateTime createdAt,
            String slackChannel) {

        boolean slack() {
            return slackChannel != null;
        }

        @Override
        public String toString() {
            return "Claimed[" + id + " of webhook " + webhookId + "]";
        }
    }

    /**
     * What an attempt of a leased delivery came to: its outcome, and the delivery's next state ({@code pending},
     * {@code succeeded} or {@code failed}) with, when pending, the delay before its next attempt.
     */
    record Attempted(Claimed delivery, Outcome outcome, long attemptedAtMillis, String state, long retryDelayMillis) {
    }

    /** The delay before the first attempt of a delivery queued now. */
    long firstDelayMillis() {
        return config.retrySchedule().isEmpty() ? 0 : config.retrySchedule().get(0).toMillis();
    }

    /**
     * A delivery to queue: the body (the exact request body, already rendered) and the secrets (name to value) it was
     * rendered with.
     */
    record Queued(long webhookId, Long automationId, Long eventId, String body, Map<String, String> secrets) {
    }

    /**
     * Queues deliveries in the current transaction, in one statement, their first attempts due after
     * {@code delayMillis}; their ids, in the order given.
     */
    List<Long> insert(List<Queued> deliveries, long delayMillis) {
        List<Long> ids = new ArrayList<>(statements.insert(arrays(deliveries), delayMillis));
        Collections.sort(ids); // ids are drawn in the order of the rows, which is the order given
        return ids;
    }

    /**
     * Queues deliveries in the current transaction already leased to the caller, who sends them once the transaction
     * has committed; the deliveries with what sending needs, in one statement, in the order given.
     */
    List<Claimed> insertLeased(List<Queued> deliveries) {
        List<Row> rows = new ArrayList<>(statements.insertLeased(arrays(deliveries), config.lease().toMillis()));
        rows.sort(Comparator.comparing(row -> row.longValue(0))); // ids follow the order given
        List<Claimed> claimed = new ArrayList<>(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            Queued queued = deliveries.get(i);
            claimed.add(claimed(rows.get(i), queued.body(), queued.secrets()));
        }
        return claimed;
    }

    /** The deliveries as arrays (sealed bodies and secrets in base64). */
    private DeliveryStatements.Queued arrays(List<Queued> deliveries) {
        int n = deliveries.size();
        Long[] webhooks = new Long[n];
        Long[] automations = new Long[n];
        Long[] events = new Long[n];
        String[] bodies = new String[n];
        String[] secrets = new String[n];
        Base64.Encoder base64 = Base64.getEncoder();
        for (int i = 0; i < n; i++) {
            Queued q = deliveries.get(i);
            webhooks[i] = q.webhookId();
            automations[i] = q.automationId();
            events[i] = q.eventId();
            bodies[i] = base64.encodeToString(cipher.seal(q.body(), bodyContext(q.webhookId())));
            byte[] sealed = sealedSecrets(q.webhookId(), q.secrets());
            secrets[i] = sealed == null ? null : base64.encodeToString(sealed);
        }
        return new DeliveryStatements.Queued(webhooks, automations, events, bodies, secrets);
    }

    /** Claims up to {@code max} due deliveries for one lease, in a transaction of its own. */
    List<Claimed> claim(int max) {
        return QuarkusTransaction.requiringNew().call(() -> {
            relaxCommit();
            return statements.claim(max, config.lease().toMillis()).stream().map(row -> claimed(row, null, null))
                    .toList();
        });
    }

    /**
     * Writes what attempts came to, in a transaction of its own: each delivery still leased as it was leaves its lease
     * with its next state and attempt count (pending ones due again after their delay), and its attempt is recorded;
     * the webhooks whose endpoint is gone and the automations whose user lost the rights they need (id to reason) are
     * disabled.
     */
    void record(List<Attempted> attempts, Collection<Long> goneWebhooks, Map<Long, String> refusedAutomations) {
        QuarkusTransaction.requiringNew().run(() -> {
            relaxCommit();
            int n = attempts.size();
            Long[] ids = new Long[n];
            Integer[] counts = new Integer[n];
            String[] states = new String[n];
            Long[] delays = new Long[n];
            String[] leases = new String[n];
            for (int i = 0; i < n; i++) {
                Attempted a = attempts.get(i);
                ids[i] = a.delivery().id();
                counts[i] = a.delivery().attempt();
                states[i] = a.state();
                delays[i] = a.retryDelayMillis();
                leases[i] = a.delivery().leasedUntil().toString();
            }
            List<Integer> written = statements.finish(ids, counts, states, delays, leases);
            recordAttempts(attempts, written);
            if (!goneWebhooks.isEmpty()) {
                statements.disableGoneWebhooks(goneWebhooks.toArray(Long[]::new));
            }
            if (!refusedAutomations.isEmpty()) {
                statements.disableAutomations(refusedAutomations.keySet().toArray(Long[]::new),
                        refusedAutomations.values().toArray(String[]::new));
            }
        });
    }

    /**
     * Gives back deliveries leased to this replica whose attempts did not finish (it is shutting down), in a
     * transaction of its own: each still pending under the same lease leaves it and is due at once, for any replica;
     * the unfinished attempt is not counted. How many were released.
     */
    int release(List<Claimed> deliveries) {
        if (deliveries.isEmpty()) {
            return 0;
        }
        Long[] ids = deliveries.stream().map(Claimed::id).toArray(Long[]::new);
        String[] leases = deliveries.stream().map(d -> d.leasedUntil().toString()).toArray(String[]::new);
        return QuarkusTransaction.requiringNew().call(() -> statements.release(ids, leases));
    }

    /** Records the attempts at the given (1-based) positions, their response bodies and errors masked. */
    private void recordAttempts(List<Attempted> attempts, List<Integer> positions) {
        if (positions.isEmpty()) {
            return;
        }
        int n = positions.size();
        Long[] ids = new Long[n];
        Integer[] numbers = new Integer[n];
        Long[] times = new Long[n];
        Integer[] statuses = new Integer[n];
        Integer[] latencies = new Integer[n];
        String[] bodies = new String[n];
        String[] errors = new String[n];
        for (int i = 0; i < n; i++) {
            Attempted a = attempts.get(positions.get(i) - 1);
            Outcome o = a.outcome();
            SecretMask mask = a.delivery().mask();
            String body = mask.apply(o.body(), o.bodyTruncated());
            String error = mask.apply(o.error(), false);
            ids[i] = a.delivery().id();
            numbers[i] = a.delivery().attempt();
            times[i] = a.attemptedAtMillis();
            statuses[i] = o.status();
            latencies[i] = (int) Math.min(Integer.MAX_VALUE, o.latencyMs());
            bodies[i] = body == null ? null : body.replace("\u0000", "");
            errors[i] = error == null ? null : error.length() > MAX_ERROR ? error.substring(0, MAX_ERROR) : error;
        }
        statements.insertAttempts(ids, numbers, times, statuses, latencies, bodies, errors);
    }

    /**
     * Queues a delivery of the scope ({@code column} = {@code webhook_id} or {@code automation_id}) again, now and with
     * a fresh retry cycle; whether it was one of the scope's.
     */
    boolean requeue(String column, long scopeId, long deliveryId) {
        return statements.requeue(column, scopeId, deliveryId);
    }

    /**
     * Queues every failed delivery of the scope created at or after {@code since} again, now and with a fresh retry
     * cycle, when its webhook is enabled; how many.
     */
    int requeueFailed(String column, long scopeId, OffsetDateTime since) {
        return statements.requeueFailed(column, scopeId, since);
    }

    /**
     * Claims and outcomes commit without waiting for the WAL flush: one lost to a database crash only makes a delivery
     * due again, and delivery is at least once anyway. The wait would otherwise sit between an event's commit and its
     * sending.
     */
    private void relaxCommit() {
        statements.relaxCommit();
    }

    /**
     * A row of {@link DeliveryStatements}{@code .SELECT_LEASED}; {@code body} and {@code secrets} are the plain body
     * and the secret values it was rendered with when the caller has them, else they are unsealed.
     */
    private Claimed claimed(Row row, String body, Map<String, String> secrets) {
        long id = row.longValue(0);
        long webhookId = row.longValue(1);
        int attempts = row.intValue(2);
        long teamId = row.longValue(8);
        String tokenName = row.string(9);
        String signingName = row.string(11);
        byte[] token = (byte[]) row.value(10);
        byte[] signing = (byte[]) row.value(12);
        byte[] sealedSecrets = (byte[]) row.value(13);
        String accessToken = token == null ? null : cipher.open(token, TeamSecrets.context(teamId, tokenName));
        String signingKey = signing == null ? null : cipher.open(signing, TeamSecrets.context(teamId, signingName));
        Map<String, String> sent = new HashMap<>();
        if (secrets != null) {
            sent.putAll(secrets);
        } else if (sealedSecrets != null) {
            sent.putAll(readSecrets(cipher.open(sealedSecrets, secretsContext(webhookId))));
        }
        if (accessToken != null) {
            sent.put(tokenName, accessToken);
        }
        if (signingKey != null) {
            sent.put(signingName, signingKey);
        }
        String refusedTeam = row.string(18);
        String refusal = refusedTeam == null ? null
                : AutomationRights.refusal(row.string(16), row.string(17),
                        Boolean.TRUE.equals(row.bool(15)) || sealedSecrets != null, refusedTeam);
        return new Claimed(id, webhookId, attempts + 1, attempts + 1 - row.intValue(3), row.time(4), row.bool(6),
                body != null ? body : cipher.open((byte[]) row.value(5), bodyContext(webhookId)), row.string(7),
                tokenName, accessToken, signingName, signingKey, row.longValue(14), refusal, SecretMask.of(sent),
                row.time(19), Webhooks.SLACK.equals(row.string(20)) ? row.string(21) : null);
    }

    static String bodyContext(long webhookId) {
        return "webhook-delivery:" + webhookId;
    }

    private static String secretsContext(long webhookId) {
        return "webhook-delivery-secrets:" + webhookId;
    }

    private byte[] sealedSecrets(long webhookId, Map<String, String> secrets) {
        return secrets.isEmpty() ? null : cipher.seal(writeSecrets(secrets), secretsContext(webhookId));
    }

    private static String writeSecrets(Map<String, String> secrets) {
        try {
            return SECRETS_JSON.writeValueAsString(secrets);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A map of strings does not serialize", e);
        }
    }

    /** The secrets a delivery was rendered with, from {@link #writeSecrets}. */
    private static Map<String, String> readSecrets(String json) {
        try {
            return SECRETS_JSON.readValue(json, new TypeReference<Map<String, String>>() {
            });
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("The secrets of a delivery do not parse", e);
        }
    }
}
