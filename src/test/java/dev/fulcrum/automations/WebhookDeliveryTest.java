package dev.fulcrum.automations;

import static dev.fulcrum.automations.WebhooksClient.as;
import static dev.fulcrum.automations.WebhooksClient.webhook;
import static dev.fulcrum.automations.WebhooksClient.webhooks;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.TransactionalException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.automations.WebhookDeliveries.DeliveryPage;
import dev.fulcrum.platform.SecretCipher;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.WebhookReceiver;
import dev.fulcrum.support.WebhookReceiver.Answer;
import dev.fulcrum.support.WebhookReceiver.Received;

/**
 * The delivery engine against a real endpoint. The test profile shortens the schedule: attempts after 0 s, 0.3 s and
 * 0.3 s, no jitter, 1.5 s per attempt, Retry-After up to 2 s, a 7 s lease and a 1 s poll.
 */
@QuarkusTest
class WebhookDeliveryTest {

    static final String SIGNING = "plain signing secret";
    static final Duration WITHIN = Duration.ofSeconds(15);

    @Inject
    Fixtures fixtures;

    @Inject
    WebhookDeliveries deliveries;

    @Inject
    EntityManager em;

    @Inject
    SecretCipher cipher;

    private WebhookReceiver receiver;
    private Account admin;
    private PlatformEntity team;

    @BeforeEach
    void setUp() throws IOException {
        receiver = new WebhookReceiver();
        admin = fixtures.user("admin");
        team = fixtures.team("lab", admin);
        WebhooksClient.secret(admin, team.name, "TOKEN", "bearer-token");
        WebhooksClient.secret(admin, team.name, "SIGNING", SIGNING);
    }

    @AfterEach
    void tearDown() {
        receiver.close();
    }

    private long webhookFor(String path) {
        return WebhooksClient.createWebhook(admin, team.name,
                webhook(Fixtures.unique("hook"), receiver.url(path), "TOKEN", "SIGNING"));
    }

    private long enqueue(long webhookId, Long automationId, String body) {
        return QuarkusTransaction.requiringNew().call(() -> deliveries.enqueue(webhookId, automationId, null, body));
    }

    private String log(long webhookId) {
        return webhooks(team.name) + "/" + webhookId + "/deliveries";
    }

    /** The delivery as the log API shows it, once it reached {@code state}. */
    private JsonPath awaitState(long webhookId, long deliveryId, String state) {
        return await("delivery " + deliveryId + " " + state).atMost(WITHIN)
                .until(() -> as(admin).get(log(webhookId)).then().statusCode(200).extract().jsonPath(),
                        page -> state.equals(page.getString("deliveries.find { it.id == " + deliveryId + " }.state")))
                .setRootPath("deliveries.find { it.id == " + deliveryId + " }");
    }

    private List<Received> awaitReceived(String path, int count) {
        return await(count + " requests at " + path).atMost(WITHIN).until(() -> receiver.received(path),
                got -> got.size() >= count);
    }

    @Test
    void aCommittedDeliveryIsSentSignedRightAway() {
        long webhookId = webhookFor("/hook");
        String body = "{\"event_type\":\"ADD_ARTIFACT_ALIAS\",\"alias\":\"prod \\\"x\\\" ü\"}";
        // an id of no automation (an automation's deliveries are sent only while the user it acts for may)
        long automation = System.nanoTime();
        long id = enqueue(webhookId, automation, body);
        Received request = awaitReceived("/hook", 1).get(0);
        assertArrayEquals(body.getBytes(StandardCharsets.UTF_8), request.body());
        assertEquals("msg_" + id, request.header("webhook-id"));
        assertEquals("Bearer bearer-token", request.header("Authorization"));
        assertEquals("application/json", request.header("Content-Type"));
        assertEquals(Signatures.serviceSignature(SIGNING, request.body()), request.header("X-Service-Signature"));
        assertEquals(Signatures.standardSignature(SIGNING, request.header("webhook-id"),
                request.header("webhook-timestamp"), request.body()), request.header("webhook-signature"));

        JsonPath delivery = awaitState(webhookId, id, "succeeded");
        assertEquals(1, delivery.getInt("attempt_count"));
        assertEquals(automation, delivery.getLong("automation_id"));
        assertEquals(200, delivery.getInt("attempts[0].status"));
        assertEquals("answer 200", delivery.getString("attempts[0].response_body"));
        assertNull(delivery.get("next_attempt_at"));
    }

    @Test
    void aDeliveryExistsOnlyIfItsTransactionCommits() {
        long webhookId = webhookFor("/rolled-back");
        assertThrows(TransactionalException.class, () -> deliveries.enqueue(webhookId, null, null, "{}"));
        assertThrows(IllegalStateException.class, () -> QuarkusTransaction.requiringNew().run(() -> {
            deliveries.enqueue(webhookId, null, null, "{\"rolled\":\"back\"}");
            throw new IllegalStateException("the change fails");
        }));
        long committed = enqueue(webhookId, null, "{\"committed\":true}");
        awaitState(webhookId, committed, "succeeded");
        List<Received> got = receiver.received("/rolled-back");
        assertEquals(1, got.size());
        assertEquals("{\"committed\":true}", got.get(0).text());
    }

    @Test
    void aFailedAttemptIsRetriedWithTheSameWebhookId() {
        receiver.answer("/flaky", new Answer(500, Map.of(), "try again", 0), Answer.status(204));
        long webhookId = webhookFor("/flaky");
        long id = enqueue(webhookId, null, "{\"n\":1}");
        JsonPath delivery = awaitState(webhookId, id, "succeeded");
        assertEquals(2, delivery.getInt("attempt_count"));
        assertEquals(500, delivery.getInt("attempts[0].status"));
        assertEquals("try again", delivery.getString("attempts[0].response_body"));
        assertEquals(204, delivery.getInt("attempts[1].status"));
        List<Received> got = receiver.received("/flaky");
        assertEquals(2, got.size());
        assertEquals(got.get(0).header("webhook-id"), got.get(1).header("webhook-id"));
        assertTrue(got.get(1).receivedAtMillis() - got.get(0).receivedAtMillis() >= 250, "the schedule's delay");
    }

    @Test
    void afterTheLastAttemptTheDeliveryFailsAndCanBeRedelivered() {
        receiver.answer("/down", Answer.status(503));
        long webhookId = webhookFor("/down");
        long first = enqueue(webhookId, null, "{\"n\":1}");
        long second = enqueue(webhookId, null, "{\"n\":2}");
        JsonPath failed = awaitState(webhookId, first, "failed");
        assertEquals(3, failed.getInt("attempt_count"));
        assertNull(failed.get("next_attempt_at"));
        awaitState(webhookId, second, "failed");

        receiver.answer("/down", Answer.status(200));
        as(admin).post(log(webhookId) + "/" + first + "/redeliver").then().statusCode(202).body("state",
                equalTo("pending"));
        JsonPath redelivered = awaitState(webhookId, first, "succeeded");
        assertEquals(4, redelivered.getInt("attempt_count"));
        as(admin).post(log(webhookId) + "/" + (second + 1000) + "/redeliver").then().statusCode(404);

        as(admin).queryParam("since", OffsetDateTime.now().plusHours(1).toString())
                .post(log(webhookId) + "/redeliver-failed").then().statusCode(202).body("redelivered", equalTo(0));
        as(admin).queryParam("since", OffsetDateTime.now().minusHours(1).toString())
                .post(log(webhookId) + "/redeliver-failed").then().statusCode(202).body("redelivered", equalTo(1));
        awaitState(webhookId, second, "succeeded");
        as(admin).post(log(webhookId) + "/redeliver-failed").then().statusCode(422);
        as(admin).queryParam("since", "yesterday").post(log(webhookId) + "/redeliver-failed").then().statusCode(422)
                .body("errors[0].field", equalTo("since"));
    }

    @Test
    void retryAfterIsHonouredWithinItsBound() {
        receiver.answer("/busy", new Answer(429, Map.of("Retry-After", "1"), "slow down", 0), Answer.status(200));
        receiver.answer("/very-busy", new Answer(503, Map.of("Retry-After", "3600"), "later", 0), Answer.status(200));
        long busy = webhookFor("/busy");
        long veryBusy = webhookFor("/very-busy");
        long a = enqueue(busy, null, "{}");
        long b = enqueue(veryBusy, null, "{}");
        awaitState(busy, a, "succeeded");
        awaitState(veryBusy, b, "succeeded");
        List<Received> got = receiver.received("/busy");
        long gap = got.get(1).receivedAtMillis() - got.get(0).receivedAtMillis();
        assertTrue(gap >= 950, "waited for Retry-After: 1, not the 0.3 s of the schedule: " + gap);
        List<Received> bounded = receiver.received("/very-busy");
        long boundedGap = bounded.get(1).receivedAtMillis() - bounded.get(0).receivedAtMillis();
        assertTrue(boundedGap >= 1950 && boundedGap < 10_000, "Retry-After bounded by max-retry-after: " + boundedGap);
    }

    @Test
    void aTimedOutAttemptIsRetried() {
        receiver.answer("/slow", new Answer(200, Map.of(), "too late", 3_000), Answer.status(200));
        long webhookId = webhookFor("/slow");
        long id = enqueue(webhookId, null, "{}");
        JsonPath delivery = awaitState(webhookId, id, "succeeded");
        assertEquals(2, delivery.getInt("attempt_count"));
        assertNull(delivery.get("attempts[0].status"));
        assertTrue(delivery.getString("attempts[0].error").contains("Timed out"));
        assertTrue(delivery.getInt("attempts[0].latency_ms") >= 1400);
    }

    @Test
    void goneDisablesTheWebhook() {
        receiver.answer("/gone", Answer.status(410));
        long webhookId = webhookFor("/gone");
        long id = enqueue(webhookId, null, "{}");
        JsonPath delivery = awaitState(webhookId, id, "failed");
        assertEquals(1, delivery.getInt("attempt_count"));
        String path = webhooks(team.name) + "/" + webhookId;
        as(admin).get(path).then().statusCode(200).body("enabled", equalTo(false)).body("disabled_reason",
                containsString("410"));

        long after = enqueue(webhookId, null, "{}");
        JsonPath notSent = awaitState(webhookId, after, "failed");
        assertTrue(notSent.getString("attempts[0].error").contains("disabled"));
        assertEquals(1, receiver.received("/gone").size(), "a disabled webhook sends nothing");
        as(admin).post(log(webhookId) + "/" + after + "/redeliver").then().statusCode(409);

        receiver.answer("/gone", Answer.status(200));
        Map<String, Object> enable = webhook(Fixtures.unique("again"), receiver.url("/gone"), null, null);
        enable.put("enabled", true);
        as(admin).body(enable).put(path).then().statusCode(200).body("enabled", equalTo(true)).body("disabled_reason",
                nullValue());
        as(admin).post(log(webhookId) + "/" + after + "/redeliver").then().statusCode(202);
        awaitState(webhookId, after, "succeeded");
    }

    @Test
    void aDeliveryLeasedByACrashedReplicaIsSentAfterTheLease() {
        long webhookId = webhookFor("/lease");
        long committedAt = System.currentTimeMillis();
        // the row as a replica leaves it when it dies after leasing a delivery (by a claim, or by writing it already
        // leased for its own dispatcher) and before sending it or writing an outcome
        long id = QuarkusTransaction.requiringNew()
                .call(() -> ((Number) em.createNativeQuery("""
                        insert into webhook_deliveries (webhook_id, body, leased_until, next_attempt_at)
                        values (?1, ?2, now() + interval '2 seconds', now() + interval '2 seconds') returning id""")
                        .setParameter(1, webhookId)
                        .setParameter(2, cipher.seal("{\"leased\":true}", DeliveryQueue.bodyContext(webhookId)))
                        .getSingleResult()).longValue());
        Received request = awaitReceived("/lease", 1).get(0);
        assertTrue(request.receivedAtMillis() - committedAt >= 1900, "not before the lease ended");
        assertEquals("msg_" + id, request.header("webhook-id"));
        assertEquals("{\"leased\":true}", request.text());
        assertEquals(1, awaitState(webhookId, id, "succeeded").getInt("attempt_count"));
    }

    @Test
    void aDeliveryWhoseTransactionUsedMostOfItsLeaseIsSentOnceAfterTheLease() {
        long webhookId = webhookFor("/late");
        QuarkusTransaction.requiringNew().run(() -> {
            deliveries.enqueue(webhookId, null, null, "{\"late\":true}");
            // the rest of a long transaction: its commit comes with less of the 7 s lease left than an attempt
            // (1.5 s) and the writing of its outcome need, so sending it now could send it twice
            java.util.concurrent.locks.LockSupport.parkNanos(Duration.ofMillis(5_000).toNanos());
        });
        Object[] row = (Object[]) QuarkusTransaction.requiringNew()
                .call(() -> em
                        .createNativeQuery("select id, extract(epoch from leased_until) * 1000"
                                + " from webhook_deliveries where webhook_id = ?1")
                        .setParameter(1, webhookId).getSingleResult());
        long id = ((Number) row[0]).longValue();
        long leasedUntil = ((Number) row[1]).longValue();
        Received request = awaitReceived("/late", 1).get(0);
        assertTrue(request.receivedAtMillis() >= leasedUntil - 50, "sent by a claim once the lease ended");
        assertEquals(1, awaitState(webhookId, id, "succeeded").getInt("attempt_count"));
        assertEquals(1, receiver.received("/late").size(), "once");
    }

    @Test
    void manyDeliveriesAreSentConcurrentlyOncePerAttempt() {
        receiver.answer("/many", new Answer(200, Map.of(), "ok", 50));
        long webhookId = webhookFor("/many");
        QuarkusTransaction.requiringNew().run(() -> {
            for (int i = 0; i < 300; i++) {
                deliveries.enqueue(webhookId, null, null, "{\"i\":" + i + "}");
            }
        });
        await("all outcomes written").atMost(WITHIN)
                .until(() -> deliveries.listByWebhook(webhookId, "pending", 1, null).deliveries().isEmpty());
        // each answer takes 50 ms: deliveries sent one after another would never overlap, whatever the machine's load
        assertTrue(receiver.mostUnderWay("/many") >= 4,
                "sent concurrently, not one after another: at most " + receiver.mostUnderWay("/many") + " at once");
        // every delivery arrived, and never more often than it was attempted: an attempt that timed out on a loaded
        // machine is rightly sent again (and counted; the one that timed out may or may not have arrived), but none is
        // sent twice within one attempt (a lease that ran out while its attempt was under way)
        Map<String, Integer> arrivals = new java.util.HashMap<>();
        receiver.received("/many").forEach(r -> arrivals.merge(r.header("webhook-id"), 1, Integer::sum));
        @SuppressWarnings("unchecked")
        List<Object[]> attempts = QuarkusTransaction.requiringNew()
                .call(() -> em.createNativeQuery("select id, attempts from webhook_deliveries where webhook_id = ?1")
                        .setParameter(1, webhookId).getResultList());
        assertEquals(300, attempts.size());
        assertEquals(300, arrivals.size(), "every delivery arrived");
        for (Object[] delivery : attempts) {
            int arrived = arrivals.getOrDefault("msg_" + delivery[0], 0);
            int attempted = ((Number) delivery[1]).intValue();
            assertTrue(arrived >= 1 && arrived <= attempted,
                    "delivery " + delivery[0] + " arrived " + arrived + " times in " + attempted + " attempts");
        }
    }

    @Test
    void theLogFiltersAndPagesAndIsReadablePerAutomation() {
        receiver.answer("/log", Answer.status(200));
        long webhookId = webhookFor("/log");
        long automation = System.nanoTime();
        long a = enqueue(webhookId, automation, "{\"a\":1}");
        long b = enqueue(webhookId, automation, "{\"b\":2}");
        long c = enqueue(webhookId, null, "{\"c\":3}");
        awaitState(webhookId, a, "succeeded");
        awaitState(webhookId, b, "succeeded");
        awaitState(webhookId, c, "succeeded");

        DeliveryPage byAutomation = deliveries.listByAutomation(automation, null, null, null);
        assertEquals(List.of(b, a), byAutomation.deliveries().stream().map(WebhookDeliveries.Delivery::id).toList());
        DeliveryPage firstPage = deliveries.listByAutomation(automation, "succeeded", 1, null);
        assertEquals(b, firstPage.deliveries().get(0).id());
        assertEquals(b, firstPage.nextBefore());
        assertEquals(List.of(a), deliveries.listByAutomation(automation, null, 1, firstPage.nextBefore()).deliveries()
                .stream().map(WebhookDeliveries.Delivery::id).toList());

        as(admin).queryParam("limit", 2).get(log(webhookId)).then().statusCode(200)
                .body("deliveries.size()", equalTo(2)).body("deliveries[0].id", equalTo((int) c))
                .body("next_before", equalTo((int) b));
        as(admin).queryParam("state", "failed").get(log(webhookId)).then().statusCode(200)
                .body("deliveries.size()", equalTo(0)).body("next_before", nullValue());
        as(admin).queryParam("state", "bogus").get(log(webhookId)).then().statusCode(422);
        as(admin).queryParam("limit", 0).get(log(webhookId)).then().statusCode(422);
    }
}
