package dev.fulcrum.automations;

import static dev.fulcrum.automations.WebhooksClient.webhook;
import static dev.fulcrum.automations.WebhooksClient.webhooks;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.hasItems;
import static org.hamcrest.Matchers.nullValue;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.automations.AutomationWorld.Team;

/**
 * Limits of what an automation or a webhook may hold: regexes of at most 1,024 characters compiling to at most 5,000
 * RE2 instructions, and IPv4 literals in canonical dotted-decimal form only (saved, tested and sent alike).
 */
@QuarkusTest
class AutomationLimitsApiTest {

    @Inject
    AutomationWorld world;

    Team team;
    long hook;

    @BeforeEach
    void team() {
        team = world.team("limits");
        hook = team.webhook("http://127.0.0.1:9/hook", null, null);
    }

    private Map<String, Object> alias(String regex) {
        Map<String, Object> body = AutomationWorld.automation("alias", "ADD_ARTIFACT_ALIAS", team.name(), hook);
        body.put("alias_regex", regex);
        return body;
    }

    @Test
    void requiredFieldsLengthsAndRangesComeFromTheContract() {
        Map<String, Object> missing = new java.util.HashMap<>(Map.of("description", "no name, event, team or webhook"));
        // the generated model's creator names the first required property missing
        AutomationWorld.as(team.admin).body(missing).post(team.automations()).then().statusCode(422)
                .contentType("application/problem+json").body("errors.field", hasItem("name"));
        missing.put("name", "n");
        AutomationWorld.as(team.admin).body(missing).post(team.automations()).then().statusCode(422)
                .body("errors.field", hasItem("event"));

        Map<String, Object> tooLong = alias("prod");
        tooLong.put("name", "n".repeat(129));
        tooLong.put("description", "d".repeat(4097));
        tooLong.put("payload", "x".repeat(65_537));
        AutomationWorld.as(team.admin).body(tooLong).post(team.automations()).then().statusCode(422)
                .body("errors.field", hasItems("name", "description", "payload"));

        Map<String, Object> threshold = AutomationWorld.automation("t", "RUN_METRIC_THRESHOLD", team.name(), hook);
        threshold.put("metric_threshold",
                Map.of("metric", "m".repeat(257), "window", 1001, "comparison", ">", "threshold", 1));
        AutomationWorld.as(team.admin).body(threshold).post(team.automations()).then().statusCode(422)
                .body("errors.field", hasItems("metric_threshold.metric", "metric_threshold.window"));
        threshold.put("metric_threshold",
                Map.of("metric", "m".repeat(256), "window", 1000, "comparison", ">", "threshold", 1));
        AutomationWorld.as(team.admin).body(threshold).post(team.automations()).then().statusCode(201);

        Map<String, Object> change = AutomationWorld.automation("c", "RUN_METRIC_CHANGE", team.name(), hook);
        change.put("metric_change", Map.of("metric", "", "window", 0, "amount", 1));
        AutomationWorld.as(team.admin).body(change).post(team.automations()).then().statusCode(422).body("errors.field",
                hasItems("metric_change.metric", "metric_change.window"));

        Map<String, Object> blank = alias("prod");
        blank.put("name", "  ");
        AutomationWorld.as(team.admin).body(blank).post(team.automations()).then().statusCode(422).body("errors.field",
                hasItem("name"));
    }

    @Test
    void aRegexLongerThan1024CharactersIsRefusedNamingTheField() {
        AutomationWorld.as(team.admin).body(alias("a".repeat(1025))).post(team.automations()).then().statusCode(422)
                .contentType("application/problem+json").body("errors.field", hasItem("alias_regex"))
                .body("detail", containsString("at most 1024 characters"));
        AutomationWorld.as(team.admin).body(alias("a".repeat(1024))).post(team.automations()).then().statusCode(201);
    }

    @Test
    void aRegexThatCompilesTooLargeIsRefusedWithoutCompilingIt() {
        long start = System.nanoTime();
        // 24 characters, a billion instructions: compiling it would exhaust the heap
        AutomationWorld.as(team.admin).body(alias("((a{1000}){1000}){1000}")).post(team.automations()).then()
                .statusCode(422).body("errors.field", hasItem("alias_regex"))
                .body("detail", containsString("5000 RE2 instructions"));
        assertTrue(System.nanoTime() - start < 5_000_000_000L, "refused at once");
        AutomationWorld.as(team.admin).body(alias("(a{100}){100}")).post(team.automations()).then().statusCode(422)
                .body("errors.field", hasItem("alias_regex"));

        Map<String, Object> run = AutomationWorld.automation("run", "RUN_STATE", team.name(), hook);
        run.put("run_filter", Map.of("name_regex", "(x{1000}){10}"));
        AutomationWorld.as(team.admin).body(run).post(team.automations()).then().statusCode(422).body("errors.field",
                hasItem("run_filter.name_regex"));
        run.put("run_filter", Map.of("name_regex", "^train-(\\d{1,4})$"));
        AutomationWorld.as(team.admin).body(run).post(team.automations()).then().statusCode(201);
    }

    @Test
    void ipv4LiteralsMustBeCanonicalWhenAWebhookIsSaved() {
        for (String url : new String[] { "http://0177.0.0.1:9/hook", "http://2130706433/", "http://0x7f.1/",
                "http://127.1/", "http://0x7f000001/", "http://127.0.0.01/", "http://127.0.0.1./",
                "https://example.0x7f/" }) {
            WebhooksClient.as(team.admin).body(webhook("odd", url, null, null)).post(webhooks(team.name())).then()
                    .statusCode(422).body("errors[0].field", equalTo("url"))
                    .body("errors[0].message", containsString("canonical dotted-decimal"));
        }
        WebhooksClient.as(team.admin).body(webhook("plain", "http://127.0.0.1:9/hook", null, null))
                .post(webhooks(team.name())).then().statusCode(201);
    }

    @Test
    void aWebhookSavedBeforeTheRuleIsNotTestedAgainstAnotherAddress() {
        // written straight into the table, as an older version could have saved it
        long odd = team.webhook("http://0177.0.0.1:9/hook", null, null);
        WebhooksClient.as(team.admin).body(Map.of()).post(webhooks(team.name()) + "/" + odd + "/test").then()
                .statusCode(200).body("ok", equalTo(false)).body("status", nullValue())
                .body("error", containsString("canonical dotted-decimal"));
    }
}
