package dev.fulcrum.automations;

import static dev.fulcrum.automations.AutomationWorld.as;
import static org.hamcrest.Matchers.containsInAnyOrder;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;

import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.automations.AutomationWorld.Team;
import dev.fulcrum.support.FakeSlack;
import dev.fulcrum.support.FakeSlack.Posted;
import dev.fulcrum.support.Fixtures.Account;

/**
 * A team's Slack integrations (team admins make them, anyone on the team reads them, never the token) and the
 * {@code SlackNotification} automations that post through them to a fake Slack: the bot token as the bearer, the
 * channel, the title and message with the event's variables; Slack's {@code "ok": false} is a failed attempt, not
 * retried unless rate-limited.
 */
@QuarkusTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SlackNotificationsTest {

    @Inject
    AutomationWorld world;

    FakeSlack slack;

    @BeforeAll
    void slack() {
        slack = new FakeSlack();
    }

    @AfterAll
    void stop() {
        slack.close();
    }

    private static String integrations(Team team) {
        return "/api/v1/teams/" + team.name() + "/slack-integrations";
    }

    private static Map<String, Object> integration(String name, String channel, String secret) {
        Map<String, Object> body = new HashMap<>();
        body.put("name", name);
        body.put("channel", channel);
        body.put("bot_token_secret", secret);
        return body;
    }

    private static Map<String, Object> notifying(String name, Team team, long integration, Map<String, Object> note) {
        Map<String, Object> body = new HashMap<>();
        body.put("name", name);
        body.put("event", "CREATE_ARTIFACT");
        body.put("team", team.name());
        body.put("action_type", "SlackNotification");
        body.put("slack_integration_id", integration);
        body.put("notification", note);
        return body;
    }

    @Test
    void teamAdminsRegisterSlackAndAutomationsPostToIt() throws Exception {
        Team team = world.team("slk");
        team.secret("SLACK_BOT", "xoxb-good-token");
        Account member = world.user("slk-member");
        world.member(team, member, Role.MEMBER);
        Team other = world.team("slk-other");
        other.secret("SLACK_BOT", "xoxb-other-token");
        String path = integrations(team);

        // a member may not register one; bad inputs are 422 naming each field
        as(member).body(integration("alerts", "#ml-alerts", "SLACK_BOT")).post(path).then().statusCode(403);
        as(team.admin).body(integration("alerts", "#not a channel", "SLACK_BOT")).post(path).then().statusCode(422)
                .body("errors.field", containsInAnyOrder("channel"));
        as(team.admin).body(integration("alerts", "#ml-alerts", "NOPE")).post(path).then().statusCode(422)
                .body("errors.field", containsInAnyOrder("bot_token_secret"))
                .body("errors.message", hasItem("Team " + team.name() + " has no secret NOPE"));
        as(team.admin).body(Map.of("name", "alerts", "channel", "ml")).post(path).then().statusCode(422)
                .body("errors.field", hasItem("bot_token_secret"));
        as(team.admin).body(integration("alerts", "ml", "lower-case")).post(path).then().statusCode(422)
                .body("errors.field", hasItem("bot_token_secret"));

        Map<String, Object> settings = integration("alerts", "#ml-alerts", "SLACK_BOT");
        settings.put("workspace", "Lab");
        long id = as(team.admin).body(settings).post(path).then().statusCode(201).body("channel", equalTo("ml-alerts"))
                .body("workspace", equalTo("Lab")).body("bot_token_secret", equalTo("SLACK_BOT")).extract().jsonPath()
                .getLong("id");
        as(team.admin).body(settings).post(path).then().statusCode(409);
        // anyone on the team reads it, never the token; another team's path does not find it; nor do the webhook paths
        String listed = as(member).get(path).then().statusCode(200).body("[0].id", equalTo((int) id)).extract()
                .asString();
        assertFalse(listed.contains("xoxb"), listed);
        as(member).get(path + "/" + id).then().statusCode(200).body("name", equalTo("alerts"));
        as(other.admin).get(integrations(other) + "/" + id).then().statusCode(404);
        as(team.admin).get("/api/v1/teams/" + team.name() + "/webhooks/" + id).then().statusCode(404);
        as(member).delete(path + "/" + id).then().statusCode(403);

        // the automation: its notification's variables are the event's, no secrets; another team's integration: 404
        Map<String, Object> note = Map.of("title", "New ${artifact_collection_name} ${version}", "message",
                "by ${event_author} <!channel> & co", "severity", "WARN");
        as(team.admin).body(notifying("n", team, id, Map.of("message", "${run_name} $SLACK_BOT")))
                .post(team.automations()).then().statusCode(422).body("errors.field", hasItem("notification.message"))
                .body("errors[0].message", containsString("SLACK_BOT, run_name"));
        as(team.admin).body(notifying("n", team, id, Map.of("severity", "INFO"))).post(team.automations()).then()
                .statusCode(422).body("errors.field", hasItem("notification.message"));
        Map<String, Object> both = notifying("n", team, id, note);
        both.put("webhook_id", id);
        as(team.admin).body(both).post(team.automations()).then().statusCode(422);
        Map<String, Object> withPayload = notifying("n", team, id, note);
        withPayload.put("payload", "{}");
        as(team.admin).body(withPayload).post(team.automations()).then().statusCode(422).body("errors.field",
                hasItem("payload"));
        long elsewhere = as(other.admin).body(integration("theirs", "general", "SLACK_BOT")).post(integrations(other))
                .then().statusCode(201).extract().jsonPath().getLong("id");
        as(team.admin).body(notifying("n", team, elsewhere, note)).post(team.automations()).then().statusCode(404);

        long automation = team.automation(notifying("notify", team, id, note));
        as(team.admin).get(team.automations() + "/" + automation).then().statusCode(200)
                .body("action_type", equalTo("SlackNotification")).body("slack_integration_id", equalTo((int) id))
                .body("webhook_id", nullValue()).body("payload", nullValue())
                .body("notification.title", equalTo("New ${artifact_collection_name} ${version}"))
                .body("notification.severity", equalTo("WARN"));

        String version = team.upload("model-x", null, "weights");
        Posted posted = slack.await("xoxb-good-token", 1).get(0);
        assertEquals("/api/chat.postMessage", posted.path());
        assertTrue(posted.contentType().startsWith("application/json"), posted.contentType());
        assertEquals("ml-alerts", posted.body().getString("channel"));
        // Slack's control characters escaped: a value mentions no one
        assertEquals(":warning: *New model-x " + version + "*\nby " + team.admin.name() + " &lt;!channel&gt; &amp; co",
                posted.body().getString("text"));
        JsonPath log = awaitDelivery(team, automation, "succeeded");
        assertEquals(id, log.getLong("deliveries[0].webhook_id"));

        // a renamed notification is what the next event posts; the delete of the integration takes the automation
        as(team.admin).body(Map.of("notification", Map.of("message", "again ${version}")))
                .patch(team.automations() + "/" + automation).then().statusCode(200)
                .body("notification.title", equalTo("")).body("notification.severity", equalTo("INFO"));
        team.upload("model-x", null, "weights 2");
        assertEquals("again v1", slack.await("xoxb-good-token", 2).get(1).body().getString("text"));
        as(team.admin).delete(path + "/" + id).then().statusCode(204);
        as(team.admin).get(team.automations() + "/" + automation).then().statusCode(404);
    }

    @Test
    void teamAdminsChangeAnIntegrationAndItsQueuedDeliveriesFollowTheChange() throws Exception {
        Team team = world.team("slk-patch");
        team.secret("REVOKED", FakeSlack.REVOKED + "-" + team.name());
        team.secret("NEW_BOT", "xoxb-patched-token");
        Account member = world.user("slk-patch-member");
        world.member(team, member, Role.MEMBER);
        Account viewer = world.user("slk-patch-viewer");
        world.member(team, viewer, Role.VIEWER);
        Team other = world.team("slk-patch-other");
        String path = integrations(team);
        long id = as(team.admin).body(integration("alerts", FakeSlack.MISSING_CHANNEL, "REVOKED")).post(path).then()
                .statusCode(201).extract().jsonPath().getLong("id");
        as(team.admin).body(integration("second", "general", "REVOKED")).post(path).then().statusCode(201);
        String hook = as(team.admin)
                .get("/api/v1/teams/" + team.name() + "/webhooks/"
                        + team.webhook("https://hooks.example.com/x", null, null))
                .then().statusCode(200).extract().jsonPath().getString("name");
        Map<String, Object> note = notifying("patched", team, id, Map.of("title", "${version}"));
        long automation = team.automation(note);

        // an event while the token is revoked: its delivery fails for good (invalid_auth), posted to the old channel
        team.upload("model-p", null, "p");
        long delivery = awaitDelivery(team, automation, "failed").getLong("deliveries[0].id");
        assertEquals(FakeSlack.MISSING_CHANNEL,
                slack.await(FakeSlack.REVOKED + "-" + team.name(), 1).get(0).body().getString("channel"));

        // who may: admins only; another team's path does not find it
        String one = path + "/" + id;
        as(member).body(Map.of("channel", "general")).patch(one).then().statusCode(403);
        as(viewer).body(Map.of("channel", "general")).patch(one).then().statusCode(403);
        as(other.admin).body(Map.of("channel", "general")).patch(integrations(other) + "/" + id).then().statusCode(404);
        // bad values: 422 naming every broken field, as on create; a name another one holds: 409
        as(team.admin).body(Map.of("name", " ", "channel", "#not a channel")).patch(one).then().statusCode(422)
                .body("errors.field", containsInAnyOrder("name", "channel"));
        as(team.admin).body(Map.of("name", "n".repeat(129))).patch(one).then().statusCode(422).body("errors.field",
                hasItem("name"));
        as(team.admin).body(Map.of("bot_token_secret", 7)).patch(one).then().statusCode(422).body("errors.field",
                hasItem("bot_token_secret"));
        as(team.admin).body(Map.of("bot_token_secret", "NOPE")).patch(one).then().statusCode(422)
                .body("errors.field", containsInAnyOrder("bot_token_secret"))
                .body("errors.message", hasItem("Team " + team.name() + " has no secret NOPE"));
        as(team.admin).body(Map.of("name", "second")).patch(one).then().statusCode(409);
        as(team.admin).body(Map.of("name", hook)).patch(one).then().statusCode(409);
        as(team.admin).get(one).then().statusCode(200).body("name", equalTo("alerts"))
                .body("channel", equalTo(FakeSlack.MISSING_CHANNEL)).body("bot_token_secret", equalTo("REVOKED"));

        // a partial change keeps what is not given; its own name is not a conflict
        as(team.admin).body(Map.of("workspace", "Lab")).patch(one).then().statusCode(200)
                .body("workspace", equalTo("Lab")).body("channel", equalTo(FakeSlack.MISSING_CHANNEL));
        as(team.admin).body(Map.of("name", "alerts", "channel", "#ml-fixed", "bot_token_secret", "NEW_BOT")).patch(one)
                .then().statusCode(200).body("name", equalTo("alerts")).body("channel", equalTo("ml-fixed"))
                .body("workspace", equalTo("Lab")).body("bot_token_secret", equalTo("NEW_BOT"));
        as(team.admin).body(Map.of("workspace", "")).patch(one).then().statusCode(200).body("workspace", equalTo(""));

        // the failed delivery, sent again, reads the integration as it is now: the new channel and the new token
        as(team.admin).post(team.automations() + "/" + automation + "/deliveries/" + delivery + "/redeliver").then()
                .statusCode(202);
        Posted again = slack.await("xoxb-patched-token", 1).get(0);
        assertEquals("ml-fixed", again.body().getString("channel"));
        assertEquals(awaitDelivery(team, automation, "succeeded").getLong("deliveries[0].id"), delivery);
        // and so does the next event; the automation kept its integration
        team.upload("model-p", null, "p2");
        assertEquals("ml-fixed", slack.await("xoxb-patched-token", 2).get(1).body().getString("channel"));
        as(team.admin).get(team.automations() + "/" + automation).then().statusCode(200).body("slack_integration_id",
                equalTo((int) id));
    }

    @Test
    void aTestMessageShowsWhatSlackSaidWithoutTheToken() throws Exception {
        Team team = world.team("slk-test");
        team.secret("SLACK_BOT", "xoxb-test-token");
        team.secret("REVOKED", FakeSlack.REVOKED + "-" + team.name());
        Account member = world.user("slk-test-member");
        world.member(team, member, Role.MEMBER);
        Team other = world.team("slk-test-other");
        String path = integrations(team);
        long id = as(team.admin).body(integration("tester", "#ml-test", "SLACK_BOT")).post(path).then().statusCode(201)
                .extract().jsonPath().getLong("id");
        String test = path + "/" + id + "/test";

        as(member).post(test).then().statusCode(403);
        as(other.admin).post(integrations(other) + "/" + id + "/test").then().statusCode(404);
        as(team.admin).body(Map.of("message", "m".repeat(4001))).post(test).then().statusCode(422).body("errors.field",
                hasItem("message"));
        as(team.admin).body(Map.of("title", 5)).post(test).then().statusCode(422).body("errors.field",
                hasItem("title"));

        // without a body: the default message, posted with the bot token to the channel
        JsonPath ok = as(team.admin).post(test).then().statusCode(200).body("ok", equalTo(true))
                .body("status", equalTo(200)).body("channel", equalTo("ml-test")).body("slack_error", nullValue())
                .body("error", nullValue()).extract().jsonPath();
        Posted posted = slack.await("xoxb-test-token", 1).get(0);
        assertEquals("ml-test", posted.body().getString("channel"));
        assertEquals("Fulcrum test message from integration tester", posted.body().getString("text"));
        assertEquals(posted.body().getString("channel"), ok.getString("channel"));
        assertTrue(ok.getString("ts").startsWith("1700000000."), ok.prettify());
        as(team.admin).body(Map.of("title", "Hello <!channel>", "message", "from the test")).post(test).then()
                .statusCode(200).body("ok", equalTo(true));
        assertEquals("*Hello &lt;!channel&gt;*\nfrom the test",
                slack.await("xoxb-test-token", 2).get(1).body().getString("text"));

        // Slack's refusals: its error named; the token never in the answer, although Slack echoed it
        as(team.admin).body(Map.of("channel", FakeSlack.MISSING_CHANNEL)).patch(path + "/" + id).then().statusCode(200);
        as(team.admin).post(test).then().statusCode(200).body("ok", equalTo(false)).body("status", equalTo(200))
                .body("slack_error", equalTo("channel_not_found"))
                .body("error", equalTo("Slack answered ok=false: channel_not_found"));
        as(team.admin).body(Map.of("channel", FakeSlack.OUTSIDE_CHANNEL)).patch(path + "/" + id).then().statusCode(200);
        String echoed = as(team.admin).post(test).then().statusCode(200).body("ok", equalTo(false))
                .body("slack_error", equalTo("not_in_channel")).body("body", containsString("[secret SLACK_BOT]"))
                .extract().asString();
        assertFalse(echoed.contains("xoxb-test-token"), echoed);
        as(team.admin).body(Map.of("bot_token_secret", "REVOKED")).patch(path + "/" + id).then().statusCode(200);
        as(team.admin).post(test).then().statusCode(200).body("ok", equalTo(false)).body("slack_error",
                equalTo("invalid_auth"));
    }

    @Test
    void slacksRefusalIsAFailedDeliveryAndARateLimitIsRetried() throws Exception {
        Team team = world.team("slk-fail");
        team.secret("REVOKED", FakeSlack.REVOKED);
        team.secret("LIMITED", FakeSlack.LIMITED);
        String path = integrations(team);
        long revoked = as(team.admin).body(integration("revoked", "C0123456789", "REVOKED")).post(path).then()
                .statusCode(201).extract().jsonPath().getLong("id");
        long limited = as(team.admin).body(integration("limited", "general", "LIMITED")).post(path).then()
                .statusCode(201).extract().jsonPath().getLong("id");
        Map<String, Object> refusedBody = notifying("refused", team, revoked, Map.of("title", "${version}"));
        refusedBody.put("collection", "a");
        long refused = team.automation(refusedBody);
        Map<String, Object> limitedBody = notifying("limited", team, limited, Map.of("title", "${version}"));
        limitedBody.put("collection", "b");
        long retried = team.automation(limitedBody);

        team.upload("a", null, "a");
        JsonPath failed = awaitDelivery(team, refused, "failed");
        // invalid_auth is not retried: one attempt, Slack's 200 and its error recorded
        assertEquals(1, failed.getInt("deliveries[0].attempt_count"));
        assertEquals(200, failed.getInt("deliveries[0].attempts[0].status"));
        assertTrue(failed.getString("deliveries[0].attempts[0].error").contains("invalid_auth"), failed.prettify());
        assertEquals(1, slack.await(FakeSlack.REVOKED, 1).size());

        team.upload("b", null, "b");
        JsonPath ok = awaitDelivery(team, retried, "succeeded");
        List<Integer> statuses = ok.getList("deliveries[0].attempts.status");
        assertTrue(statuses.contains(429) && statuses.contains(200), ok.prettify());
        assertEquals("C0123456789", slack.await(FakeSlack.REVOKED, 1).get(0).body().getString("channel"));
    }

    @Test
    void theConsolesAutomationFormOffersTheTeamsSlackIntegrations() {
        Team team = world.team("slk-console");
        team.secret("SLACK_BOT", "xoxb-console");
        String form = "/console/projects/" + team.name() + "/" + team.project + "/automations";
        String cookie = io.restassured.RestAssured.given().contentType(io.restassured.http.ContentType.URLENC)
                .formParam("api_key", team.admin.key()).redirects().follow(false).post("/console/sign-in").then()
                .statusCode(303).extract().cookie(ConsoleSessions.COOKIE);
        // without a Slack integration the action is not offered
        String page = io.restassured.RestAssured.given().cookie(ConsoleSessions.COOKIE, cookie).get(form + "/new")
                .then().statusCode(200).extract().asString();
        assertFalse(page.contains("value=\"SlackNotification\""), "no Slack integration, no Slack action");
        long id = as(team.admin).body(integration("console-alerts", "ops", "SLACK_BOT")).post(integrations(team)).then()
                .statusCode(201).extract().jsonPath().getLong("id");
        page = io.restassured.RestAssured.given().cookie(ConsoleSessions.COOKIE, cookie).get(form + "/new").then()
                .statusCode(200).extract().asString();
        assertTrue(page.contains("value=\"SlackNotification\""), page);
        java.util.regex.Matcher csrf = java.util.regex.Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"")
                .matcher(page);
        assertTrue(csrf.find(), page);
        String target = team.name() + ":" + id;
        String created = io.restassured.RestAssured.given().cookie(ConsoleSessions.COOKIE, cookie).redirects()
                .follow(false).contentType(io.restassured.http.ContentType.URLENC).formParam("_csrf", csrf.group(1))
                .formParam("name", "console-slack").formParam("event", "CREATE_ARTIFACT")
                .formParam("action_type", "SlackNotification").formParam("slack_target", target)
                .formParam("notification_title", "New ${version}").formParam("notification_message", "")
                .formParam("notification_severity", "ERROR").formParam("enabled", "on").post(form).then()
                .statusCode(303).extract().header("Location");
        long automation = Long.parseLong(created.substring(created.lastIndexOf('/') + 1));
        as(team.admin).get(team.automations() + "/" + automation).then().statusCode(200)
                .body("action_type", equalTo("SlackNotification")).body("slack_integration_id", equalTo((int) id))
                .body("notification.title", equalTo("New ${version}")).body("notification.severity", equalTo("ERROR"));
        // the edit form shows it as it is, so that saving it again keeps it
        page = io.restassured.RestAssured.given().cookie(ConsoleSessions.COOKIE, cookie).get(form + "/" + automation)
                .then().statusCode(200).extract().asString();
        assertTrue(page.contains("<option value=\"SlackNotification\" selected>"), page);
        assertTrue(page.contains("<option value=\"" + target + "\" selected>"), page);
        assertTrue(page.contains("value=\"New ${version}\""), page);
        assertTrue(page.contains("<option selected>ERROR</option>"), page);
    }

    @Test
    void theTeamPageListsRegistersTestsAndDeletesSlackIntegrations() throws Exception {
        Team team = world.team("slk-page");
        team.secret("PAGE_BOT", "xoxb-page-token");
        Account viewer = world.user("slk-page-viewer");
        world.member(team, viewer, Role.VIEWER);
        String page = "/console/teams/" + team.name();
        Console admin = Console.signIn(team.admin);
        String shown = admin.get(page);
        assertTrue(shown.contains("No Slack integrations yet."), shown);
        assertTrue(shown.contains("<option>PAGE_BOT</option>"), "the bot token is picked from the team's secrets");

        // the form registers through the API; the API's refusal is shown on the page
        assertTrue(admin.post(page + "/slack-integrations", 422, "name", "page-alerts", "channel", "#bad channel",
                "workspace", "", "bot_token_secret", "PAGE_BOT").contains("role=\"alert\""));
        admin.post(page + "/slack-integrations", 303, "name", "page-alerts", "channel", "#page-alerts", "workspace",
                "Lab", "bot_token_secret", "PAGE_BOT");
        long id = as(team.admin).get(integrations(team)).then().statusCode(200)
                .body("[0].channel", equalTo("page-alerts")).body("[0].workspace", equalTo("Lab")).extract().jsonPath()
                .getLong("[0].id");
        shown = admin.get(page);
        assertTrue(shown.contains("#page-alerts") && shown.contains("Send test message"), shown);

        // the test button posts a real message and shows Slack's answer
        shown = admin.post(page + "/slack-integrations/" + id + "/test", 200);
        assertTrue(shown.contains("id=\"slack-test-result\""), shown);
        assertTrue(shown.contains("posted to #page-alerts"), shown);
        assertEquals("Fulcrum test message from integration page-alerts",
                slack.await("xoxb-page-token", 1).get(0).body().getString("text"));
        assertFalse(shown.contains("xoxb-page-token"), shown);

        // a viewer sees the list and no form
        String viewed = Console.signIn(viewer).get(page);
        assertTrue(viewed.contains("#page-alerts"), viewed);
        assertFalse(viewed.contains("Send test message") || viewed.contains("id=\"new-slack\""), viewed);

        admin.post(page + "/slack-integrations/" + id + "/delete", 303);
        as(team.admin).get(integrations(team) + "/" + id).then().statusCode(404);
    }

    /** A console session: its cookie and the form token of the last page read. */
    private static final class Console {
        private final String cookie;
        private String csrf;

        private Console(String cookie) {
            this.cookie = cookie;
        }

        static Console signIn(Account account) {
            return new Console(io.restassured.RestAssured.given().contentType(io.restassured.http.ContentType.URLENC)
                    .formParam("api_key", account.key()).redirects().follow(false).post("/console/sign-in").then()
                    .statusCode(303).extract().cookie(ConsoleSessions.COOKIE));
        }

        String get(String path) {
            String page = io.restassured.RestAssured.given().cookie(ConsoleSessions.COOKIE, cookie).get(path).then()
                    .statusCode(200).extract().asString();
            java.util.regex.Matcher token = java.util.regex.Pattern.compile("name=\"_csrf\" value=\"([^\"]+)\"")
                    .matcher(page);
            assertTrue(token.find(), page);
            csrf = token.group(1);
            return page;
        }

        /** Posts the form (field, value, ...) with the token; the page answered. */
        String post(String path, int status, String... fields) {
            io.restassured.specification.RequestSpecification form = io.restassured.RestAssured.given()
                    .cookie(ConsoleSessions.COOKIE, cookie).redirects().follow(false)
                    .contentType(io.restassured.http.ContentType.URLENC).formParam("_csrf", csrf);
            for (int i = 0; i < fields.length; i += 2) {
                form.formParam(fields[i], fields[i + 1]);
            }
            return form.post(path).then().statusCode(status).extract().asString();
        }
    }

    private static JsonPath awaitDelivery(Team team, long automation, String state) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            JsonPath log = as(team.admin).get(team.automations() + "/" + automation + "/deliveries").then()
                    .statusCode(200).extract().jsonPath();
            if (state.equals(log.getString("deliveries[0].state"))) {
                return log;
            }
            if (System.nanoTime() > end) {
                throw new AssertionError("No " + state + " delivery: " + log.prettify());
            }
            Thread.sleep(100);
        }
    }
}
