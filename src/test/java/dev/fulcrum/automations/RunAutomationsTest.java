package dev.fulcrum.automations;

import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import com.fasterxml.jackson.databind.JsonNode;

import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.accounts.Role;
import dev.fulcrum.automations.AutomationWorld.Team;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.WebhookReceiver;
import dev.fulcrum.support.WebhookReceiver.Received;

/**
 * Run events: state changes with run filters, metric thresholds and changes over windows of the run's history, and at
 * most one firing per run per 24 hours.
 */
@QuarkusTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RunAutomationsTest {

    @Inject
    AutomationWorld world;

    @Inject
    EntityManager em;

    WebhookReceiver receiver;

    @BeforeAll
    void receiver() throws Exception {
        receiver = new WebhookReceiver(WebhookReceiver.Answer.empty(204));
    }

    @AfterAll
    void stop() {
        receiver.close();
    }

    private static Map<String, Object> row(String metric, double value) {
        return Map.of(metric, value);
    }

    @Test
    void aFailedRunPassingTheFiltersSendsTheChatHookWithItsGrantedSecret() {
        Team team = world.team("runs");
        Account member = world.user("member");
        world.member(team, member, Role.MEMBER);
        team.secret("CHANNEL_ID", "C0123456");
        long hook = team.webhook(receiver.url("/chat"), null, null);
        Map<String, Object> body = AutomationWorld.automation("chat-on-failure", "RUN_STATE", team.name(), hook);
        body.put("run_states", List.of("failed"));
        body.put("run_filter", Map.of("creator", member.name(), "name_regex", "^train-"));
        body.put("granted_secrets", List.of("CHANNEL_ID"));
        body.put("payload", """
                {"channel": "$CHANNEL_ID", "text": "Run ${run_name} ${run_state}",
                 "blocks": [{"type": "section", "text": {"type": "mrkdwn",
                  "text": "*${run_name}* by ${run_created_by} in ${project_name} was ${run_previous_state}"}},
                  {"type": "divider"}]}""");
        team.automation(body);

        team.run(member, "eval-a");
        team.state(member, "eval-a", "failed");
        team.run(team.admin, "train-b");
        team.state(team.admin, "train-b", "failed");
        team.run(member, "train-c");
        team.state(member, "train-c", "finished");
        team.run(member, "train-a");
        team.state(member, "train-a", "failed");

        Received got = receiver.awaitAt("/chat");
        JsonNode json = got.json();
        assertEquals("C0123456", json.get("channel").asText());
        assertEquals("Run train-a failed", json.get("text").asText());
        assertEquals("*train-a* by " + member.name() + " in proj was running",
                json.get("blocks").get(0).get("text").get("text").asText());
        assertEquals("mrkdwn", json.get("blocks").get(0).get("text").get("type").asText());
        assertEquals("divider", json.get("blocks").get(1).get("type").asText());
        assertEquals(1, deliveriesOf(hook), "eval-a (name), train-b (creator) and train-c (state) did not fire");
    }

    @Test
    void aDisplayNameFilterFiresOnlyForTheRunShownByThatName() {
        Team team = world.team("display");
        long hook = team.webhook(receiver.url("/display"), null, null);
        Map<String, Object> body = AutomationWorld.automation("baseline-low", "RUN_METRIC_THRESHOLD", team.name(),
                hook);
        body.put("metric_threshold",
                Map.of("metric", "loss", "aggregation", "MAX", "window", 1, "comparison", "<", "threshold", 1));
        body.put("run_filter", Map.of("display_name_regex", "(x{1000}){10}"));
        AutomationWorld.as(team.admin).body(body).post(team.automations()).then().statusCode(422).body("errors.field",
                org.hamcrest.Matchers.hasItem("run_filter.display_name_regex"));
        body.put("run_filter", Map.of("display_name_regex", "^baseline$"));
        body.put("payload", "{\"run\": \"${run_name}\"}");
        long automation = team.automation(body);
        AutomationWorld.as(team.admin).get(team.automations() + "/" + automation).then().statusCode(200)
                .body("run_filter.display_name_regex", equalTo("^baseline$"));

        team.run(team.admin, "d1", "candidate");
        team.log(team.admin, "d1", List.of(row("loss", 0.5)));
        // its name is baseline, its display name is not
        team.run(team.admin, "baseline", "other");
        team.log(team.admin, "baseline", List.of(row("loss", 0.5)));
        team.run(team.admin, "d2", "baseline");
        team.log(team.admin, "d2", List.of(row("loss", 0.5)));
        assertEquals("d2", receiver.awaitAt("/display").json().get("run").asText());
        assertEquals(1, deliveriesOf(hook), "candidate and other are other display names");
    }

    @Test
    void aZScoreAgainstTheWindowBeforeTheLatestValueFiresInItsDirection() {
        Team team = world.team("zscore");
        long hook = team.webhook(receiver.url("/zscore"), null, null);
        Map<String, Object> body = AutomationWorld.automation("loss-spike", "RUN_METRIC_ZSCORE", team.name(), hook);
        body.put("metric_zscore", Map.of("metric", "loss", "window", 4, "threshold", 2, "direction", "INCREASE"));
        body.put("payload", "{\"run\": \"${run_name}\", \"value\": \"${metric_value}\","
                + " \"z\": \"${metric_zscore}\", \"window\": \"${metric_window}\", \"event\": \"${event_type}\"}");
        long automation = team.automation(body);
        AutomationWorld.as(team.admin).get(team.automations() + "/" + automation).then().statusCode(200)
                .body("metric_zscore.window", equalTo(4)).body("metric_zscore.direction", equalTo("INCREASE"));

        team.run(team.admin, "z1");
        // 1, 2, 1, 2: mean 1.5, deviation 0.5
        team.log(team.admin, "z1", List.of(row("loss", 1), row("loss", 2), row("loss", 1), row("loss", 2)));
        team.log(team.admin, "z1", List.of(row("loss", 0.2)));
        assertEquals(0, deliveriesOf(hook), "a z-score of -2.6 is a decrease, not watched");
        team.run(team.admin, "z2");
        team.log(team.admin, "z2", List.of(row("loss", 1), row("loss", 2), row("loss", 1), row("loss", 2)));
        team.log(team.admin, "z2", List.of(row("loss", 2.6)));
        Received got = receiver.awaitAt("/zscore");
        assertEquals("z2", got.json().get("run").asText());
        assertEquals(2.6, Double.parseDouble(got.json().get("value").asText()), 1e-9);
        assertEquals((2.6 - 1.5) / 0.5, Double.parseDouble(got.json().get("z").asText()), 1e-9);
        assertEquals("4", got.json().get("window").asText());
        assertEquals("RUN_METRIC_ZSCORE", got.json().get("event").asText());

        team.run(team.admin, "z3");
        team.log(team.admin, "z3", List.of(row("loss", 1), row("loss", 1), row("loss", 1), row("loss", 1)));
        team.log(team.admin, "z3", List.of(row("loss", 5)));
        assertEquals(1, deliveriesOf(hook), "values that do not vary give no z-score");
    }

    @Test
    void aThresholdOverTheWindowFiresOncePerRunPer24Hours() {
        Team team = world.team("thresh");
        long hook = team.webhook(receiver.url("/threshold"), null, null);
        Map<String, Object> body = AutomationWorld.automation("loss-low", "RUN_METRIC_THRESHOLD", team.name(), hook);
        body.put("metric_threshold",
                Map.of("metric", "loss", "aggregation", "AVERAGE", "window", 3, "comparison", "<", "threshold", 0.5));
        body.put("payload",
                "{\"run\": \"${run_name}\", \"metric\": \"${metric_name}\", \"value\": \"${metric_value}\"}");
        long automation = team.automation(body);

        team.run(team.admin, "r1");
        team.log(team.admin, "r1", List.of(row("loss", 0.9), row("loss", 0.8)));
        assertEquals(0, deliveriesOf(hook), "two values do not fill a window of three");
        team.log(team.admin, "r1", List.of(row("loss", 0.7)));
        assertEquals(0, deliveriesOf(hook), "average 0.8 is not below 0.5");
        team.log(team.admin, "r1", List.of(row("loss", 0.1), row("loss", 0.2)));
        Received got = receiver.awaitAt("/threshold");
        assertEquals("r1", got.json().get("run").asText());
        assertEquals("loss", got.json().get("metric").asText());
        assertEquals(1.0 / 3, Double.parseDouble(got.json().get("value").asText()), 1e-9,
                "the average of the last three values: 0.7, 0.1, 0.2");

        team.log(team.admin, "r1", List.of(row("loss", 0.05)));
        team.log(team.admin, "r1", List.of(Map.of("acc", 1.0)));
        assertEquals(1, deliveriesOf(hook), "at most once per run per 24 hours");

        team.run(team.admin, "r2");
        team.log(team.admin, "r2", List.of(row("loss", 0.1), row("loss", 0.1), row("loss", 0.1)));
        assertEquals(2, deliveriesOf(hook), "another run fires on its own");

        QuarkusTransaction.requiringNew().run(() -> em.createNativeQuery("""
                update automation_run_firings set fired_at = fired_at - interval '25 hours'
                where automation_id = ?1 and run_id = (select id from runs where name = 'r1'
                and project_id = (select project_id from automations where id = ?1))""").setParameter(1, automation)
                .executeUpdate());
        team.log(team.admin, "r1", List.of(row("loss", 0.05)));
        assertEquals(3, deliveriesOf(hook), "24 hours after its last firing the run fires again");
    }

    @Test
    void changesCompareTheCurrentWindowWithThePriorOne() {
        Team team = world.team("change");
        long increaseHook = team.webhook(receiver.url("/increase"), null, null);
        long decreaseHook = team.webhook(receiver.url("/decrease"), null, null);
        Map<String, Object> increase = AutomationWorld.automation("acc-up", "RUN_METRIC_CHANGE", team.name(),
                increaseHook);
        increase.put("metric_change", Map.of("metric", "acc", "aggregation", "AVERAGE", "window", 2, "change_type",
                "ABSOLUTE", "direction", "INCREASE", "amount", 0.1));
        increase.put("payload",
                "{\"value\": \"${metric_value}\", \"prior\": \"${metric_prior_value}\", \"event\": \"${event_type}\"}");
        team.automation(increase);
        Map<String, Object> decrease = AutomationWorld.automation("acc-halved", "RUN_METRIC_CHANGE", team.name(),
                decreaseHook);
        decrease.put("metric_change", Map.of("metric", "acc", "aggregation", "MAX", "window", 1, "change_type",
                "RELATIVE", "direction", "DECREASE", "amount", 0.5));
        decrease.put("payload", "{\"value\": \"${metric_value}\", \"prior\": \"${metric_prior_value}\"}");
        team.automation(decrease);

        team.run(team.admin, "c1");
        team.log(team.admin, "c1", List.of(row("acc", 0.5), row("acc", 0.5), row("acc", 0.5)));
        team.log(team.admin, "c1", List.of(row("acc", 0.55)));
        assertEquals(0, deliveriesOf(increaseHook), "0.525 against 0.5 is an increase of 0.025 only");
        team.log(team.admin, "c1", List.of(row("acc", 0.7)));
        JsonNode up = receiver.awaitAt("/increase").json();
        assertEquals(0.625, Double.parseDouble(up.get("value").asText()), 1e-9);
        assertEquals("0.5", up.get("prior").asText());
        assertEquals("RUN_METRIC_CHANGE", up.get("event").asText());
        assertEquals(0, deliveriesOf(decreaseHook));

        team.log(team.admin, "c1", List.of(row("acc", 0.3)));
        JsonNode down = receiver.awaitAt("/decrease").json();
        assertEquals("0.3", down.get("value").asText());
        assertEquals("0.7", down.get("prior").asText());
        assertEquals(1, deliveriesOf(increaseHook));
        assertTrue(receiver.received("/decrease").size() <= 1);
    }

    private long deliveriesOf(long webhookId) {
        return QuarkusTransaction.requiringNew()
                .call(() -> ((Number) em
                        .createNativeQuery("select count(*) from webhook_deliveries where webhook_id = ?1")
                        .setParameter(1, webhookId).getSingleResult()).longValue());
    }
}
