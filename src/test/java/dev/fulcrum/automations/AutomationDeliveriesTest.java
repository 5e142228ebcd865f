package dev.fulcrum.automations;

import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasSize;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.time.OffsetDateTime;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.automations.AutomationWorld.Team;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.WebhookReceiver;
import dev.fulcrum.support.WebhookReceiver.Received;

/** The delivery log of an automation, manual redelivery, and redelivery of failed deliveries. */
@QuarkusTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AutomationDeliveriesTest {

    @Inject
    AutomationWorld world;

    WebhookReceiver receiver;

    @BeforeAll
    void receiver() throws Exception {
        receiver = new WebhookReceiver(WebhookReceiver.Answer.empty(204));
    }

    @AfterAll
    void stop() {
        receiver.close();
    }

    @Test
    void theLogShowsEachDeliveryWithItsAttemptsAndARedeliveryKeepsItsWebhookId() {
        Team team = world.team("log");
        long hook = team.webhook(receiver.url("/log"), null, null);
        long id = team.automation(AutomationWorld.automation("logged", "ADD_ARTIFACT_TAG", team.name(), hook));
        String log = team.automations() + "/" + id + "/deliveries";
        String version = team.upload("model-l", null, "x");
        team.tag("model-l", version, "first");
        Received first = receiver.awaitAt("/log");

        JsonPath page = awaitState(team.admin, log, "succeeded");
        long delivery = page.getLong("deliveries[0].id");
        assertEquals("msg_" + delivery, first.header("webhook-id"));
        assertEquals(id, page.getLong("deliveries[0].automation_id"));
        assertEquals(hook, page.getLong("deliveries[0].webhook_id"));
        assertEquals(204, page.getInt("deliveries[0].attempts[0].status"));

        AutomationWorld.as(team.admin).post(log + "/" + delivery + "/redeliver").then().statusCode(202)
                .body("id", equalTo((int) delivery)).body("state", equalTo("pending"));
        receiver.await(r -> r.path().equals("/log") && r != first);
        assertEquals(2, receiver.received("/log").stream().filter(r -> r.header("webhook-id").equals("msg_" + delivery))
                .count(), "the redelivery has the delivery's webhook-id");

        Account viewer = world.user("viewer");
        world.member(team, viewer, Role.VIEWER);
        AutomationWorld.as(viewer).get(log).then().statusCode(403);
        AutomationWorld.as(viewer).post(log + "/" + delivery + "/redeliver").then().statusCode(403);
        AutomationWorld.as(team.admin).get(team.automations() + "/999999999/deliveries").then().statusCode(404);
    }

    @Test
    void failedDeliveriesOfARegistryAutomationAreSentAgainOnRequest() {
        Team team = world.team("failed");
        Registry registry = world.registry(team.admin);
        long refused = team.webhook("http://127.0.0.1:9/refused", null, null);
        String automations = "/api/v1/registries/" + registry.name + "/automations";
        long id = AutomationWorld.as(team.admin)
                .body(AutomationWorld.automation("to-nowhere", "LINK_ARTIFACT", team.name(), refused)).post(automations)
                .then().statusCode(201).extract().jsonPath().getLong("id");
        OffsetDateTime before = OffsetDateTime.now().minusMinutes(1);
        String version = team.upload("model-f", null, "y");
        team.link("model-f", version, registry.name, "nowhere");

        String log = automations + "/" + id + "/deliveries";
        JsonPath page = awaitState(team.admin, log + "?state=failed", "failed");
        assertEquals(3, page.getInt("deliveries[0].attempt_count"), "the test schedule has three attempts");
        AutomationWorld.as(team.admin).queryParam("since", before.toString()).post(log + "/redeliver-failed").then()
                .statusCode(202).body("redelivered", equalTo(1));
        AutomationWorld.as(team.admin).post(log + "/redeliver-failed").then().statusCode(422);
        AutomationWorld.as(team.admin).get(log + "?state=succeeded").then().statusCode(200).body("deliveries",
                hasSize(0));
    }

    /** Polls the log until its newest delivery is in {@code state} (the dispatcher works in the background). */
    private JsonPath awaitState(Account admin, String log, String state) {
        return await("a delivery in state " + state).atMost(Duration.ofSeconds(20)).until(
                () -> AutomationWorld.as(admin).get(log).then().statusCode(200).extract().jsonPath(),
                page -> state.equals(page.getString("deliveries[0].state")));
    }

}
