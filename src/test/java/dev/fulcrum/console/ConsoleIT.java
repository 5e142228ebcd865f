package dev.fulcrum.console;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.Cookie;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.interactions.Actions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;

import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.inference.hub.FakeHub;
import dev.fulcrum.support.FakeSlack;

/**
 * The web console in a real browser (Debian's Chromium through its chromedriver) against the packaged application, as a
 * user runs it: sign in with an API key, team secrets and webhooks with a test request to a real receiver, a Slack
 * integration with a test message to a fake Slack, an automation on an alias event created, triggered through the API,
 * edited, disabled and enabled and deleted behind its typed confirmation; one automation of each other event and run
 * filter made in its form and read back through the API; a viewer's read-only pages; user strings rendered as text;
 * sign-out ending the session. Saves screenshots of the main screens (to target/console-screenshots, or docs/images
 * with -Dconsole.screenshots=docs/images) and prints the weight and timing of an automations page with 200 automations.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleIT {

    private static final String ADMIN_KEY = ConsoleApp.ADMIN_KEY;
    private static final ConsoleApp console = ConsoleApp.SHARED;
    private static final String TEAM = "ml-platform";
    private static final String PROJECT = "churn";
    private static final String XSS = "<img src=x onerror=alert(1)>";

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> RECEIVED = new CopyOnWriteArrayList<>();
    private static final List<String> RECEIVED_AUTH = new CopyOnWriteArrayList<>();

    private static HttpServer receiver;
    private static ChromeDriver browser;
    private static WebDriverWait wait;
    private static String viewerKey;
    private static long webhookId;

    @BeforeAll
    static void start() throws Exception {
        receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        receiver.createContext("/hook", exchange -> {
            RECEIVED.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            RECEIVED_AUTH.add(String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
            byte[] answer = ("pong from receiver " + XSS).getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("X-Receiver", "console-it");
            exchange.sendResponseHeaders(200, answer.length);
            exchange.getResponseBody().write(answer);
            exchange.close();
        });
        receiver.start();
        // the test receiver runs on loopback over http
        console.join();
        browser = console.browser();
        wait = console.await();

        // the world the screens show, made through the API: a team with a viewer, a project
        api("POST", "/api/v1/users", ADMIN_KEY, Map.of("username", "vic"), 201);
        viewerKey = api("POST", "/api/v1/users/vic/api-keys", ADMIN_KEY, Map.of("name", "console"), 201).get("key")
                .asText();
        api("POST", "/api/v1/teams", ADMIN_KEY, Map.of("name", TEAM), 201);
        api("PUT", "/api/v1/teams/" + TEAM + "/members/vic", ADMIN_KEY, Map.of("role", "viewer"), 200);
        api("POST", "/api/v1/entities/" + TEAM + "/projects", ADMIN_KEY, Map.of("name", PROJECT), 201);
    }

    @AfterAll
    static void stop() throws IOException {
        if (receiver != null) {
            receiver.stop(0);
        }
    }

    @Test
    @Order(1)
    void signsInWithAnApiKeyIntoASessionCookie() throws Exception {
        HttpResponse<String> root = HTTP.send(HttpRequest.newBuilder(uri("/")).GET().build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(303, root.statusCode(), "/ is the console");
        assertSecurityHeaders(get("/console/sign-in", null));
        assertSecurityHeaders(get("/console/assets/console.js", null));

        browser.get(url("/"));
        wait.until(d -> d.getCurrentUrl().endsWith("/console/sign-in"));
        assertLabelled();
        signIn(ADMIN_KEY);
        assertEquals("Hello, admin", text("h1"));
        Cookie session = browser.manage().getCookieNamed(ConsoleSessions.COOKIE);
        assertNotNull(session);
        assertTrue(session.isHttpOnly(), "the session cookie is HttpOnly");
        assertEquals("Strict", session.getSameSite());
        assertFalse(session.getValue().contains(ADMIN_KEY), "the key is not in the cookie");
        assertFalse(browser.getPageSource().contains(ADMIN_KEY), "nor on the page");
        assertTrue(text("#main").contains(TEAM), "my teams are listed");
        assertTrue(text("#main").contains(TEAM + "/" + PROJECT), "my projects are listed");
        assertLabelled();
        screenshot("console-home");
    }

    @Test
    @Order(2)
    void createsATeamSecret() throws Exception {
        browser.get(url("/console/teams/" + TEAM));
        assertLabelled();
        browser.findElement(By.id("secret-name")).sendKeys("RECEIVER_TOKEN");
        browser.findElement(By.id("secret-value")).sendKeys("s3cret-value-42");
        browser.findElement(By.cssSelector("#new-secret button[type=submit]")).click();
        wait.until(d -> !d.findElements(By.cssSelector("#secrets td")).isEmpty());
        assertTrue(text("#secrets").contains("RECEIVER_TOKEN"));
        assertFalse(browser.getPageSource().contains("s3cret-value-42"), "secret values are never shown");
    }

    @Test
    @Order(3)
    void createsAWebhookAndTestsItSeeingTheReceiversAnswer() throws Exception {
        browser.get(url("/console/teams/" + TEAM));
        browser.findElement(By.id("webhook-name")).sendKeys("deploys " + XSS);
        browser.findElement(By.id("webhook-url")).sendKeys(receiverUrl());
        new Select(browser.findElement(By.id("webhook-token"))).selectByVisibleText("RECEIVER_TOKEN");
        browser.findElement(By.cssSelector("#new-webhook button[type=submit]")).click();
        wait.until(d -> d.getCurrentUrl().matches(".*/webhooks/\\d+$"));
        webhookId = Long.parseLong(browser.getCurrentUrl().replaceAll(".*/webhooks/", ""));
        assertEquals("Webhook deploys " + XSS, text("h1"), "the name is text, not markup");
        assertLabelled();

        WebElement payload = browser.findElement(By.id("test-payload"));
        payload.sendKeys("{\"hello\": \"console\"}");
        browser.findElement(By.cssSelector("#test-webhook button[type=submit]")).click();
        wait.until(d -> !d.findElements(By.id("test-result")).isEmpty());
        assertEquals("200", text("#test-status"));
        assertEquals("pong from receiver " + XSS, text("#test-body"), "the receiver's body, as text");
        assertTrue(text("#test-result").contains("x-receiver"), "the receiver's headers");
        assertTrue(text("#test-result").matches("(?s).*in \\d+ ms.*"), "the latency");
        assertEquals("console", JSON.readTree(RECEIVED.get(RECEIVED.size() - 1)).get("hello").asText());
        assertEquals("Bearer s3cret-value-42", RECEIVED_AUTH.get(RECEIVED_AUTH.size() - 1));
        assertFalse(browser.getPageSource().contains("s3cret-value-42"));
        assertNoAlert();
        screenshot("console-webhook-test");
    }

    @Test
    @Order(3)
    void registersASlackIntegrationAndSendsATestMessageSeeingSlacksAnswer() throws Exception {
        try (FakeSlack slack = new FakeSlack(ConsoleApp.SLACK_PORT)) {
            browser.get(url("/console/teams/" + TEAM));
            assertTrue(text("#no-slack").contains("No Slack integrations yet"));
            browser.findElement(By.id("slack-name")).sendKeys("ops " + XSS);
            browser.findElement(By.id("slack-channel")).sendKeys("#ml-ops");
            browser.findElement(By.id("slack-workspace")).sendKeys("Lab");
            new Select(browser.findElement(By.id("slack-token"))).selectByVisibleText("RECEIVER_TOKEN");
            browser.findElement(By.cssSelector("#new-slack button[type=submit]")).click();
            wait.until(d -> text("#slack-integrations").contains("#ml-ops"));
            assertTrue(text("#slack-integrations").contains("ops " + XSS), "the name is text, not markup");
            assertLabelled();

            browser.findElement(By.xpath("//button[text()='Send test message']")).click();
            wait.until(d -> !d.findElements(By.id("slack-test-result")).isEmpty());
            assertEquals("200", text("#slack-test-status"));
            assertTrue(text("#slack-test-result").contains("posted to #ml-ops"), text("#slack-test-result"));
            FakeSlack.Posted posted = slack.await("s3cret-value-42", 1).get(0);
            assertEquals("ml-ops", posted.body().getString("channel"));
            assertEquals("Fulcrum test message from integration ops &lt;img src=x onerror=alert(1)&gt;",
                    posted.body().getString("text"));
            assertFalse(browser.getPageSource().contains("s3cret-value-42"), "the bot token is never shown");
            assertNoAlert();
            screenshot("console-slack-test");

            // a channel Slack does not know: its error shown; then deleted behind its dialog
            browser.findElement(By.id("slack-name")).sendKeys("doomed");
            browser.findElement(By.id("slack-channel")).sendKeys(FakeSlack.MISSING_CHANNEL);
            browser.findElement(By.cssSelector("#new-slack button[type=submit]")).click();
            wait.until(d -> text("#slack-integrations").contains("doomed"));
            browser.findElement(By.cssSelector("button[aria-label='Send test message with doomed']")).click();
            wait.until(d -> !d.findElements(By.id("slack-test-slack-error")).isEmpty());
            assertEquals("channel_not_found", text("#slack-test-slack-error"));
            browser.findElement(By.cssSelector("button[aria-label='Delete doomed']")).click();
            WebElement dialog = browser.findElement(By.cssSelector("dialog[open]"));
            dialog.findElement(By.cssSelector("button[type=submit]")).click();
            wait.until(d -> !text("#slack-integrations").contains("doomed")
                    && text("#slack-integrations").contains("ml-ops"));
            assertEquals(1, api("GET", "/api/v1/teams/" + TEAM + "/slack-integrations", ADMIN_KEY, null, 200).size());
        }
    }

    @Test
    @Order(4)
    void createsAnAutomationOnAnAliasEventShowingTheServersErrorsAtTheirField() throws Exception {
        browser.get(url(automations()));
        browser.findElement(By.id("new-automation")).click();
        wait.until(d -> !d.findElements(By.id("automation-form")).isEmpty());
        assertLabelled();
        new Select(browser.findElement(By.id("a-event"))).selectByVisibleText("RUN_STATE");
        assertFalse(browser.findElement(By.id("a-alias")).isDisplayed(), "alias fields only for alias events");
        assertTrue(browser.findElement(By.id("s-failed")).isDisplayed(), "run states for RUN_STATE");
        assertFalse(browser.findElement(By.id("z-metric")).isDisplayed(), "z-score fields only for z-score events");
        assertFalse(browser.findElement(By.id("a-collection")).isDisplayed(), "no collection for run events");
        new Select(browser.findElement(By.id("a-event"))).selectByVisibleText("RUN_METRIC_ZSCORE");
        assertTrue(browser.findElement(By.id("z-metric")).isDisplayed(), "z-score fields for RUN_METRIC_ZSCORE");
        assertTrue(browser.findElement(By.id("r-creator")).isDisplayed(), "run filters for RUN_METRIC_ZSCORE");
        assertTrue(browser.findElement(By.cssSelector("[data-insert='${metric_zscore}']")).isDisplayed());
        new Select(browser.findElement(By.id("a-event"))).selectByVisibleText("WEAVE_METRIC_THRESHOLD");
        assertTrue(browser.findElement(By.id("w-op")).isDisplayed(), "Weave metric fields for WEAVE_METRIC_THRESHOLD");
        assertFalse(browser.findElement(By.id("r-creator")).isDisplayed(), "no run filter for a Weave metric");
        assertFalse(browser.findElement(By.id("z-metric")).isDisplayed());
        assertTrue(browser.findElement(By.cssSelector("[data-insert='${op_name}']")).isDisplayed());
        assertFalse(browser.findElement(By.cssSelector("[data-insert='${run_name}']")).isDisplayed());
        new Select(browser.findElement(By.id("a-event"))).selectByVisibleText("ADD_ARTIFACT_ALIAS");
        assertTrue(browser.findElement(By.id("a-alias")).isDisplayed());
        assertTrue(browser.findElement(By.id("a-collection")).isDisplayed(), "a collection for artifact events");
        assertFalse(browser.findElement(By.id("a-tag")).isDisplayed(), "a tag regex for tag events only");
        assertFalse(browser.findElement(By.id("s-failed")).isDisplayed());
        assertFalse(browser.findElement(By.id("z-metric")).isDisplayed());

        browser.findElement(By.id("a-name")).sendKeys("deploy-on-production");
        browser.findElement(By.id("a-alias")).sendKeys("(unclosed");
        browser.findElement(By.xpath("//button[text()='Repository dispatch']")).click();
        assertTrue(browser.findElement(By.id("a-payload")).getAttribute("value").contains("BUILD_AND_DEPLOY"));
        WebElement aliasVariable = browser.findElement(By.cssSelector("[data-insert='${alias}']"));
        assertTrue(aliasVariable.isDisplayed(), "artifact variables are offered for an alias event");
        assertFalse(browser.findElement(By.cssSelector("[data-insert='${run_name}']")).isDisplayed(),
                "run variables are not");
        browser.findElement(By.id("save-automation")).click();
        wait.until(d -> !text("#a-alias-err").isEmpty());
        assertTrue(browser.findElement(By.id("a-alias")).getAttribute("aria-describedby").contains("a-alias-err"),
                "the error is tied to its field");

        WebElement alias = browser.findElement(By.id("a-alias"));
        alias.clear();
        alias.sendKeys("^production$");
        WebElement area = browser.findElement(By.id("a-payload"));
        area.clear();
        area.sendKeys("{\"alias\": \"\", \"who\": \"${event_author}\"}");
        // put the caret inside the alias value and insert the variable there
        ((JavascriptExecutor) browser).executeScript("arguments[0].setSelectionRange(11, 11)", area);
        browser.findElement(By.cssSelector("[data-insert='${alias}']")).click();
        assertEquals("{\"alias\": \"${alias}\", \"who\": \"${event_author}\"}", area.getAttribute("value"));
        screenshot("console-automation-form");
        browser.findElement(By.id("save-automation")).click();
        wait.until(d -> d.getCurrentUrl().matches(".*/automations/\\d+$"));
        assertEquals("Automation deploy-on-production", text("h1"));

        // a Weave score's automation, made in the form: its condition reads back through the API
        browser.get(url(automations()));
        browser.findElement(By.id("new-automation")).click();
        wait.until(d -> !d.findElements(By.id("automation-form")).isEmpty());
        new Select(browser.findElement(By.id("a-event"))).selectByVisibleText("WEAVE_METRIC_THRESHOLD");
        new Select(browser.findElement(By.id("a-action"))).selectByValue("DoNothing");
        browser.findElement(By.id("a-name")).sendKeys("eval-above-0.9");
        browser.findElement(By.id("w-op")).sendKeys("exact");
        browser.findElement(By.id("w-metric")).sendKeys("output.correct");
        WebElement window = browser.findElement(By.id("w-window"));
        window.clear();
        window.sendKeys("20");
        browser.findElement(By.id("w-value")).sendKeys("0.9");
        browser.findElement(By.id("save-automation")).click();
        wait.until(d -> d.getCurrentUrl().matches(".*/automations/\\d+$"));
        assertEquals("Automation eval-above-0.9", text("h1"));
        JsonNode made = api("GET", automationsApi() + "/" + automationId("eval-above-0.9"), ADMIN_KEY, null, 200);
        assertEquals("exact", made.get("weave_metric").get("op_name").asText());
        assertEquals(20, made.get("weave_metric").get("window").asInt());
    }

    /** One form of an automation: its event, the fields filled (by id), one value the API refuses at its field. */
    private record Form(String event, String name, Map<String, String> fields, String badField, String badValue,
            String condition, List<String> offered, List<String> notOffered) {
    }

    /**
     * The events and run filters the {@code wandb} SDK knows that the tests above do not make, each in its form: the
     * variables the form offers are the event's (the API takes a payload of all of them and refuses any other), one bad
     * value is shown at its field, and the automation the API then returns has exactly the condition entered; the list
     * sums each condition up.
     */
    @Test
    @Order(5)
    void makesEachEventAndRunFilterInItsFormAsTheApiThenStoresIt() throws Exception {
        List<Form> forms = List.of(
                new Form("REMOVE_ARTIFACT_TAG", "untag-stale", Map.of("a-collection", "model-a", "a-tag", "^stale-"),
                        "a-tag", "(unclosed",
                        "{\"event\": \"REMOVE_ARTIFACT_TAG\", \"collection\": \"model-a\", \"tag_regex\": \"^stale-\"}",
                        List.of("${tag}", "${artifact_version}"), List.of("${run_name}", "${metric_value}")),
                new Form("UNLINK_ARTIFACT", "unlinked-model-a", Map.of("a-collection", "model-a"), "a-collection",
                        "m".repeat(257), "{\"event\": \"UNLINK_ARTIFACT\", \"collection\": \"model-a\"}",
                        List.of("${artifact_version_string}", "${registry_name}"), List.of("${run_name}")),
                new Form("RUN_METRIC_CHANGE", "loss-up-10-percent",
                        Map.of("c-metric", "loss", "c-agg", "MAX", "c-window", "5", "c-type", "RELATIVE", "c-direction",
                                "INCREASE", "c-amount", "0.1", "r-display", "^sweep-", "r-creator", "admin"),
                        "c-amount", "-1",
                        "{\"event\": \"RUN_METRIC_CHANGE\", \"metric_change\": {\"metric\": \"loss\", "
                                + "\"aggregation\": \"MAX\", \"window\": 5, \"change_type\": \"RELATIVE\", "
                                + "\"direction\": \"INCREASE\", \"amount\": 0.1}, \"run_filter\": {\"creator\": "
                                + "\"admin\", \"display_name_regex\": \"^sweep-\"}}",
                        List.of("${metric_name}", "${metric_value}", "${metric_prior_value}", "${run_display_name}"),
                        List.of("${metric_window}", "${metric_zscore}", "${tag}")),
                new Form(
                        "RUN_METRIC_CHANGE", "acc-moves-by-2", Map.of("c-metric", "acc", "c-agg", "MIN", "c-window",
                                "3", "c-type", "ABSOLUTE", "c-direction", "ANY", "c-amount", "2", "r-name", "^train-"),
                        "r-display", "[unclosed",
                        "{\"event\": \"RUN_METRIC_CHANGE\", \"metric_change\": {\"metric\": \"acc\", "
                                + "\"aggregation\": \"MIN\", \"window\": 3, \"change_type\": \"ABSOLUTE\", "
                                + "\"direction\": \"ANY\", \"amount\": 2.0}, \"run_filter\": {\"name_regex\": "
                                + "\"^train-\"}}",
                        List.of(), List.of()),
                new Form(
                        "RUN_METRIC_ZSCORE", "loss-drop", Map.of("z-metric", "loss", "z-window", "10", "z-threshold",
                                "2.5", "z-direction", "DECREASE", "r-creator", "vic", "r-display", "^eval$"),
                        "z-threshold", "0",
                        "{\"event\": \"RUN_METRIC_ZSCORE\", \"metric_zscore\": {\"metric\": \"loss\", \"window\": 10, "
                                + "\"threshold\": 2.5, \"direction\": \"DECREASE\"}, \"run_filter\": {\"creator\": "
                                + "\"vic\", \"display_name_regex\": \"^eval$\"}}",
                        List.of("${metric_zscore}", "${metric_window}", "${metric_value}", "${run_display_name}"),
                        List.of("${metric_prior_value}", "${run_state}")));
        for (Form form : forms) {
            browser.get(url(automations() + "/new?event=" + form.event()));
            browser.findElement(By.id("a-name")).sendKeys(form.name());
            form.fields().forEach(ConsoleIT::fill);
            @SuppressWarnings("unchecked")
            List<String> offered = (List<String>) ((JavascriptExecutor) browser).executeScript(
                    "return [...document.querySelectorAll('[data-insert]')].filter(b => !b.closest('[hidden]'))"
                            + ".map(b => b.dataset.insert)");
            assertTrue(offered.containsAll(form.offered()), form.event() + " offers " + offered);
            assertTrue(offered.stream().noneMatch(form.notOffered()::contains), form.event() + " offers " + offered);
            // a payload of every variable offered (secrets aside): the API refuses a variable its event has not
            StringBuilder payload = new StringBuilder("{");
            offered.stream().filter(v -> !v.matches("\\$\\{[A-Z_]+}"))
                    .forEach(v -> payload.append(payload.length() > 1 ? ", " : "").append("\"")
                            .append(v.replaceAll("[${}.]", "")).append("\": \"").append(v).append("\""));
            ((JavascriptExecutor) browser).executeScript("arguments[0].value = arguments[1]",
                    browser.findElement(By.id("a-payload")), payload.append("}").toString());
            String error = "#" + form.badField() + "-err";
            fill(form.badField(), form.badValue());
            browser.findElement(By.id("save-automation")).click();
            wait.until(d -> !d.findElements(By.cssSelector(".field-error:not(:empty)")).isEmpty());
            assertFalse(text(error).isEmpty(), () -> form.event() + ": no error at " + error + ": " + text("#main"));
            assertTrue(browser.findElement(By.id(form.badField())).getAttribute("aria-describedby")
                    .contains(form.badField() + "-err"), "the error is tied to its field");
            fill(form.badField(), form.fields().getOrDefault(form.badField(), ""));
            browser.findElement(By.id("save-automation")).click();
            wait.until(d -> d.getCurrentUrl().matches(".*/automations/\\d+$"));
            long id = Long.parseLong(browser.getCurrentUrl().replaceAll(".*/automations/", ""));
            JsonNode stored = api("GET", automationsApi() + "/" + id, ADMIN_KEY, null, 200);
            assertEquals(form.name(), stored.get("name").asText());
            assertEquals(JSON.readTree(form.condition()), condition(stored), form.name());
        }
        // the form's choices are the API's (the forms above chose some of them)
        assertEquals(List.of("ANY", "INCREASE", "DECREASE"), options("c-direction"));
        assertEquals(List.of("ANY", "INCREASE", "DECREASE"), options("z-direction"));
        assertEquals(List.of("ABSOLUTE", "RELATIVE"), options("c-type"));
        browser.get(url(automations()));
        String list = text("#automations");
        assertTrue(
                list.contains("z-score of loss against the 10 values before it, DECREASE by 2.5 standard deviations"),
                list);
        assertTrue(list.contains("display name matches ^eval$"), list);
    }

    @Test
    @Order(6)
    void showsTheDeliveryOfAnEventTriggeredThroughTheApi() throws Exception {
        long id = automationId("deploy-on-production");
        int before = RECEIVED.size();
        String version = uploadVersion("model-a");
        api("PUT", "/api/v1/entities/" + TEAM + "/projects/" + PROJECT + "/artifacts/collections/model-a/versions/"
                + version + "/aliases/production", ADMIN_KEY, null, 200);
        await("the receiver got the delivery").atMost(Duration.ofSeconds(20)).until(() -> RECEIVED.size() > before);
        assertEquals("production", JSON.readTree(RECEIVED.get(RECEIVED.size() - 1)).get("alias").asText());

        browser.get(url(automations() + "/" + id));
        wait.until(d -> {
            d.navigate().refresh();
            return text("#delivery-log").contains("succeeded");
        });
        assertEquals(1, browser.findElements(By.cssSelector("#deliveries tr.delivery")).size());
        assertTrue(text("#delivery-log").contains("HTTP 200"));
        assertLabelled();
        browser.get(url(automations() + "/" + id + "?state=succeeded&created_since=2000-01-01T00:00"));
        assertEquals(1, browser.findElements(By.cssSelector("#deliveries tr.delivery")).size());
        browser.get(url(automations() + "/" + id + "?state=&created_since=2999-01-01T00:00"));
        assertTrue(browser.findElements(By.cssSelector("#deliveries tr.delivery")).isEmpty(), "filtered by time");
        assertTrue(text("#no-deliveries").contains("created since 2999-01-01T00:00"));
        assertEquals(0, api("GET", automationsApi() + "/" + id + "/deliveries?created_since=2999-01-01T00:00:00Z",
                ADMIN_KEY, null, 200).get("deliveries").size());
        assertEquals(1, api("GET", automationsApi() + "/" + id + "/deliveries?created_since=2000-01-01T00:00:00Z",
                ADMIN_KEY, null, 200).get("deliveries").size());
        api("GET", automationsApi() + "/" + id + "/deliveries?created_since=yesterday", ADMIN_KEY, null, 422);
        browser.get(url(automations() + "/" + id + "?state=failed"));
        assertTrue(browser.findElements(By.cssSelector("#deliveries tr.delivery")).isEmpty(), "filtered by state");
        browser.get(url(automations() + "/" + id));
        screenshot("console-automation-deliveries");

        browser.get(url(automations()));
        assertTrue(text("#automations").contains("succeeded, "), "the list shows the last delivery's outcome");
    }

    @Test
    @Order(7)
    void editsTheAutomation() throws Exception {
        long id = automationId("deploy-on-production");
        browser.get(url(automations() + "/" + id));
        WebElement alias = browser.findElement(By.id("a-alias"));
        alias.clear();
        alias.sendKeys("^prod");
        browser.findElement(By.id("a-description")).sendKeys("ships production models");
        WebElement save = browser.findElement(By.id("save-automation"));
        save.click();
        wait.until(ExpectedConditions.stalenessOf(save));
        assertEquals("", text("#error"));
        JsonNode stored = api("GET", automationsApi() + "/" + id, ADMIN_KEY, null, 200);
        assertEquals("^prod", stored.get("alias_regex").asText());
        assertEquals("ships production models", stored.get("description").asText());
    }

    @Test
    @Order(8)
    void disablesAndEnablesInPlace() throws Exception {
        long id = automationId("deploy-on-production");
        browser.get(url(automations()));
        row(id).findElement(By.cssSelector("button.toggle")).click();
        wait.until(d -> row(id).findElement(By.cssSelector(".enabled")).getText().startsWith("no"));
        assertFalse(api("GET", automationsApi() + "/" + id, ADMIN_KEY, null, 200).get("enabled").asBoolean());
        row(id).findElement(By.cssSelector("button.toggle")).click();
        wait.until(d -> row(id).findElement(By.cssSelector(".enabled")).getText().equals("yes"));
        assertTrue(api("GET", automationsApi() + "/" + id, ADMIN_KEY, null, 200).get("enabled").asBoolean());
    }

    @Test
    @Order(9)
    void deletesOnlyAfterTheNameIsTypedInTheConfirmationDialog() throws Exception {
        long id = automationId("deploy-on-production");
        browser.get(url(automations()));
        WebElement delete = row(id).findElement(By.cssSelector("button.delete"));
        WebElement dialog = browser.findElement(By.id("delete-" + id));

        // keyboard only: reach the button with Tab, open with Enter; the focus stays in the dialog; Escape closes it
        tabTo(delete);
        browser.switchTo().activeElement().sendKeys(Keys.ENTER);
        wait.until(d -> dialog.getAttribute("open") != null);
        assertTrue(inside(dialog), "the dialog takes the focus");
        for (int i = 0; i < 6; i++) {
            browser.switchTo().activeElement().sendKeys(Keys.TAB);
            assertTrue(inside(dialog), "Tab stays in the dialog");
        }
        browser.switchTo().activeElement().sendKeys(Keys.chord(Keys.SHIFT, Keys.TAB));
        assertTrue(inside(dialog), "Shift+Tab stays in the dialog");
        assertLabelled();
        screenshot("console-delete-dialog");
        browser.switchTo().activeElement().sendKeys(Keys.ESCAPE);
        wait.until(d -> dialog.getAttribute("open") == null);
        wait.until(d -> delete.equals(d.switchTo().activeElement())); // the focus returns to the button

        // cancelling leaves it untouched
        delete.click();
        WebElement confirm = browser.findElement(By.id("confirm-" + id));
        WebElement submit = dialog.findElement(By.cssSelector("button[type=submit]"));
        confirm.sendKeys("deploy-on-prod");
        assertFalse(submit.isEnabled(), "a wrong name cannot be submitted");
        dialog.findElement(By.cssSelector("[data-close]")).click();
        wait.until(d -> dialog.getAttribute("open") == null);
        browser.navigate().refresh();
        assertEquals(1, browser.findElements(By.cssSelector("tr.automation[data-id='" + id + "']")).size());
        api("GET", automationsApi() + "/" + id, ADMIN_KEY, null, 200);

        // confirming with the name deletes it
        row(id).findElement(By.cssSelector("button.delete")).click();
        WebElement dialogAgain = browser.findElement(By.id("delete-" + id));
        browser.findElement(By.id("confirm-" + id)).sendKeys("deploy-on-production");
        dialogAgain.findElement(By.cssSelector("button[type=submit]")).click();
        wait.until(d -> d.findElements(By.cssSelector("tr.automation[data-id='" + id + "']")).isEmpty());
        api("GET", automationsApi() + "/" + id, ADMIN_KEY, null, 404);
    }

    @Test
    @Order(10)
    void rendersUserStringsAsText() throws Exception {
        Map<String, Object> body = automation(XSS);
        body.put("description", XSS);
        api("POST", automationsApi(), ADMIN_KEY, body, 201);
        browser.get(url(automations()));
        assertTrue(text("#automations").contains(XSS), "the name is shown as typed");
        assertTrue(browser.findElements(By.cssSelector("#main img")).isEmpty(), "and is no element");
        assertNoAlert();
        browser.get(url("/console/teams/" + TEAM));
        assertTrue(text("#webhooks").contains("deploys " + XSS));
        assertTrue(browser.findElements(By.cssSelector("#main img")).isEmpty());
        assertNoAlert();
        screenshot("console-team");
    }

    @Test
    @Order(11)
    void aViewerSeesNoEditControlsAndTheServerRefusesForcedChanges() throws Exception {
        signOut();
        // keyboard only: Tab to the key field, type, Enter
        browser.get(url("/console/sign-in"));
        tabTo(browser.findElement(By.id("api_key")));
        browser.switchTo().activeElement().sendKeys(viewerKey, Keys.ENTER);
        wait.until(d -> d.getCurrentUrl().endsWith("/console/"));
        assertEquals("Hello, vic", text("h1"));

        browser.get(url("/console/teams/" + TEAM));
        assertEquals("viewer", text("#my-role"));
        assertTrue(text("#slack-integrations").contains("#ml-ops"), "a viewer reads the Slack integrations");
        assertTrue(browser.findElements(By.cssSelector("#main form")).isEmpty(), "no forms for a viewer");
        assertTrue(browser.findElements(By.cssSelector("#main button")).isEmpty(), "no edit buttons");
        browser.get(url(automations()));
        assertTrue(browser.findElements(By.id("new-automation")).isEmpty());
        assertTrue(browser.findElements(By.cssSelector("button.delete, button.toggle")).isEmpty());

        // forced: the viewer's own session posts the form anyway, and through the API
        String csrf = browser.findElement(By.name("_csrf")).getAttribute("value");
        Object status = ((JavascriptExecutor) browser).executeAsyncScript("""
                const done = arguments[arguments.length - 1];
                fetch('/console/teams/%s/secrets', {method: 'POST', body: new URLSearchParams(
                    {_csrf: arguments[0], name: 'FORCED', value: 'x'})}).then(r => done(r.status));
                """.formatted(TEAM), csrf);
        assertEquals(403L, status, "the API behind the console refuses the viewer");
        api("POST", "/api/v1/teams/" + TEAM + "/secrets", viewerKey, Map.of("name", "FORCED", "value", "x"), 403);
        long id = automationId(XSS);
        Object deleteStatus = ((JavascriptExecutor) browser).executeAsyncScript("""
                const done = arguments[arguments.length - 1];
                fetch('%s/' + arguments[1] + '/delete', {method: 'POST', body: new URLSearchParams(
                    {_csrf: arguments[0], confirm: arguments[2]})}).then(r => done(r.status));
                """.formatted(automations()), csrf, id, XSS);
        assertEquals(403L, deleteStatus);
        api("GET", automationsApi() + "/" + id, ADMIN_KEY, null, 200);
    }

    @Test
    @Order(12)
    void refusesAFormWithoutTheSessionsToken() throws Exception {
        Cookie session = browser.manage().getCookieNamed(ConsoleSessions.COOKIE);
        HttpResponse<String> forged = HTTP.send(
                HttpRequest.newBuilder(uri("/console/account/api-keys"))
                        .header("Cookie", ConsoleSessions.COOKIE + "=" + session.getValue())
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .POST(HttpRequest.BodyPublishers.ofString("name=forged")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(403, forged.statusCode());
        HttpResponse<String> crossSite = HTTP.send(HttpRequest.newBuilder(uri("/console/account/api-keys"))
                .header("Cookie", ConsoleSessions.COOKIE + "=" + session.getValue())
                .header("Origin", "http://evil.example").header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("name=forged")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(403, crossSite.statusCode());
        JsonNode keys = apiArray("/api/v1/users/me/api-keys", viewerKey);
        keys.forEach(key -> assertFalse("forged".equals(key.get("name").asText())));
    }

    @Test
    @Order(13)
    void signingOutMakesTheSessionCookieUseless() throws Exception {
        String cookie = browser.manage().getCookieNamed(ConsoleSessions.COOKIE).getValue();
        assertEquals(200, withCookie(cookie, "/console/account").statusCode(), "the cookie works before");
        signOut();
        HttpResponse<String> after = withCookie(cookie, "/console/account");
        assertEquals(303, after.statusCode(), "after sign-out the old cookie is refused");
        assertTrue(after.headers().firstValue("Location").orElse("").endsWith("/console/sign-in"));
    }

    @Test
    @Order(14)
    void measuresTheAutomationsPageWith200Automations() throws Exception {
        signIn(ADMIN_KEY);
        for (int i = 0; i < 200; i++) {
            api("POST", automationsApi(), ADMIN_KEY, automation(String.format("bulk-%03d", i)), 201);
        }
        List<String> runs = new ArrayList<>();
        for (int run = 0; run < 3; run++) {
            browser.get(url(automations()));
            assertTrue(browser.findElements(By.cssSelector("tr.automation")).size() >= 200);
            @SuppressWarnings("unchecked")
            Map<String, Object> timing = (Map<String, Object>) ((JavascriptExecutor) browser).executeScript("""
                    const n = performance.getEntriesByType('navigation')[0];
                    const r = performance.getEntriesByType('resource');
                    return {document: n.transferSize, documentBody: n.decodedBodySize,
                        resources: r.reduce((s, e) => s + e.transferSize, 0), resourceCount: r.length,
                        ttfb: n.responseStart, domInteractive: n.domInteractive,
                        domContentLoaded: n.domContentLoadedEventEnd, load: n.loadEventEnd};
                    """);
            runs.add(timing.toString());
        }
        String report = "Automations page with " + browser.findElements(By.cssSelector("tr.automation")).size()
                + " automations (3 loads; bytes, ms):\n  " + String.join("\n  ", runs);
        System.out.println(report);
        Files.writeString(ConsoleApp.LOGS.resolve("automations-page.txt"), report + "\n");
        screenshot("console-automations");
    }

    @Test
    @Order(15)
    void aServerAdministratorCreatesAUserAndIssuesItsFirstKey() throws Exception {
        browser.get(url("/console/admin"));
        assertLabelled();
        browser.findElement(By.id("user-name")).sendKeys("newbie");
        browser.findElement(By.cssSelector("form[action='/console/admin/users'] button[type=submit]")).click();
        wait.until(d -> text("#users").contains("newbie"));
        WebElement keyName = browser
                .findElement(By.xpath("//input[@aria-label or @id][ancestor::tr[td[text()='newbie']]]"));
        keyName.sendKeys("first");
        browser.findElement(By.xpath("//button[text()='Issue key for newbie']")).click();
        wait.until(d -> !d.findElements(By.id("new-key")).isEmpty());
        String key = browser.findElement(By.id("new-key")).getAttribute("value");
        assertEquals("newbie", api("GET", "/api/v1/users/me", key, null, 200).get("username").asText());
        assertTrue(text("#models").contains("fulcrum-tiny") || !browser.findElements(By.id("models")).isEmpty());
        // a model of two replicas: the catalog shows each with its state
        browser.findElement(By.id("model-id")).sendKeys("replicated/console");
        browser.findElement(By.id("model-url")).sendKeys("http://127.0.0.1:9/v1, http://127.0.0.2:9/v1#weight=2");
        browser.findElement(By.cssSelector("#new-model button[type=submit]")).click();
        By replicas = By.cssSelector("ul[aria-label='Replicas of replicated/console'] li");
        wait.until(d -> d.findElements(replicas).size() == 2);
        List<String> shown = browser.findElements(replicas).stream().map(WebElement::getText).toList();
        assertTrue(shown.get(0).startsWith("127.0.0.1:9 healthy, 0 in flight"), shown.toString());
        assertTrue(shown.get(1).startsWith("127.0.0.2:9 healthy"), shown.toString());
        screenshot("console-admin");
        browser.get(url("/console/admin"));
        assertTrue(browser.findElements(By.id("new-key")).isEmpty(), "the key is shown once");
    }

    @Test
    @Order(16)
    void managesTheAutomationsOfARegistry() throws Exception {
        api("POST", "/api/v1/registries", ADMIN_KEY, Map.of("name", "models"), 201);
        browser.get(url("/console/"));
        browser.findElement(By.linkText("Automations of registry models")).click();
        browser.findElement(By.id("new-automation")).click();
        List<String> events = new Select(browser.findElement(By.id("a-event"))).getOptions().stream()
                .map(WebElement::getText).toList();
        assertEquals(
                List.of("ADD_ARTIFACT_ALIAS", "ADD_ARTIFACT_TAG", "REMOVE_ARTIFACT_TAG", "ADD_COLLECTION_TAG",
                        "REMOVE_COLLECTION_TAG", "LINK_ARTIFACT", "UNLINK_ARTIFACT"),
                events, "a registry offers its events");
        new Select(browser.findElement(By.id("a-event"))).selectByVisibleText("ADD_ARTIFACT_TAG");
        browser.findElement(By.id("a-name")).sendKeys("tagged-in-registry");
        browser.findElement(By.id("a-tag")).sendKeys("^candidate$");
        browser.findElement(By.id("save-automation")).click();
        wait.until(d -> d.getCurrentUrl().matches(".*/registries/models/automations/\\d+$"));
        JsonNode tagged = api("GET",
                "/api/v1/registries/models/automations/" + browser.getCurrentUrl().replaceAll(".*/automations/", ""),
                ADMIN_KEY, null, 200);
        assertEquals(JSON.readTree("{\"event\": \"ADD_ARTIFACT_TAG\", \"tag_regex\": \"^candidate$\"}"),
                condition(tagged));
        browser.get(url("/console/registries/models/automations"));
        assertTrue(text("#automations").contains("tagged-in-registry"));
        assertTrue(text("#automations").contains("none yet"));

        // a collection's tag: its own form (a tag regex, no version variables), fired from the collection's page
        browser.findElement(By.id("new-automation")).click();
        new Select(browser.findElement(By.id("a-event"))).selectByVisibleText("ADD_COLLECTION_TAG");
        assertTrue(browser.findElement(By.id("a-tag")).isDisplayed(), "a tag regex for a collection's tag events");
        assertTrue(browser.findElement(By.id("a-collection")).isDisplayed());
        assertTrue(browser.findElement(By.cssSelector("[data-insert='${tag}']")).isDisplayed());
        assertFalse(browser.findElement(By.cssSelector("[data-insert='${artifact_version}']")).isDisplayed(),
                "a collection's tag events have no version");
        browser.findElement(By.id("a-name")).sendKeys("collection-tagged");
        browser.findElement(By.id("a-tag")).sendKeys("^approved$");
        browser.findElement(By.id("save-automation")).click();
        wait.until(d -> d.getCurrentUrl().matches(".*/registries/models/automations/\\d+$"));
        String version = uploadVersion("model-r");
        api("POST", "/api/v1/entities/" + TEAM + "/projects/" + PROJECT + "/artifacts/collections/model-r/versions/"
                + version + "/links", ADMIN_KEY, Map.of("registry", "models", "collection", "shelf"), 201);
        int before = RECEIVED.size();
        browser.get(url("/console/registries/models/artifacts/shelf"));
        assertLabelled();
        browser.findElement(By.id("collection-tag")).sendKeys("approved");
        browser.findElement(By.xpath("//button[text()='Add tag to the collection']")).click();
        wait.until(d -> text("#collection-tags").contains("approved"));
        await("the receiver got the collection's tag").atMost(Duration.ofSeconds(20))
                .until(() -> RECEIVED.subList(before, RECEIVED.size()).stream().anyMatch(b -> b.contains("approved")));
        browser.findElement(By.xpath("//button[text()='Remove tag approved of the collection']")).click();
        wait.until(d -> text("#collection-tags").isEmpty());
        browser.get(url("/console/registries/models/automations"));
        wait.until(d -> {
            d.navigate().refresh();
            return text("#automations").contains("succeeded, ");
        });

        // DoNothing: no webhook or payload to give; its firing is shown in the list
        browser.findElement(By.id("new-automation")).click();
        new Select(browser.findElement(By.id("a-event"))).selectByVisibleText("REMOVE_COLLECTION_TAG");
        new Select(browser.findElement(By.id("a-action"))).selectByValue("DoNothing");
        assertFalse(browser.findElement(By.id("a-payload")).isDisplayed(), "a DoNothing automation has no payload");
        browser.findElement(By.id("a-name")).sendKeys("quiet-untag");
        browser.findElement(By.id("save-automation")).click();
        wait.until(d -> d.getCurrentUrl().matches(".*/registries/models/automations/\\d+$"));
        api("PUT", "/api/v1/registries/models/collections/shelf/tags/spare", ADMIN_KEY, null, 200);
        api("DELETE", "/api/v1/registries/models/collections/shelf/tags/spare", ADMIN_KEY, null, 200);
        browser.get(url("/console/registries/models/automations"));
        WebElement quiet = browser.findElement(By.xpath("//tr[td/a[text()='quiet-untag']]"));
        assertTrue(quiet.getText().contains("DoNothing") && quiet.getText().contains("fired, "), quiet.getText());
    }

    @Test
    @Order(17)
    void aModelPulledByNameShowsALiveProgressBarWithSpeedAndTimeLeft() throws Exception {
        try (FakeHub hub = new FakeHub(ConsoleApp.HUB_PORT)) {
            FakeHub.Blob file = FakeHub.random(12 << 20, 57);
            hub.repo("fulcrum-test/Console-GGUF", "open", Map.of("Console-Q4_K_M.gguf", file, "Console-Q8_0.gguf",
                    FakeHub.random(4096, 58), "README.md", FakeHub.random(64, 59)));
            hub.rate(4 << 20);
            FakeHub.Hold hold = hub.holdAt(file.sha256(), 5 << 20);
            browser.get(url("/console/admin"));
            browser.findElement(By.id("model-id")).sendKeys("console-gguf");
            new Select(browser.findElement(By.id("model-backend"))).selectByVisibleText("gguf");
            browser.findElement(By.id("model-pull")).sendKeys("hf.co/fulcrum-test/Console-GGUF");
            browser.findElement(By.cssSelector("#new-model button[type=submit]")).click();
            assertTrue(hold.awaitReached());
            By status = By.cssSelector(".pull .pull-status");
            // the bar follows the download: it stands at the held byte with the speed and the time left
            wait.until(d -> !d.findElements(status).isEmpty()
                    && d.findElement(status).getText().startsWith("downloading 41 %")
                    && d.findElement(status).getText().contains("left"));
            String shown = browser.findElement(status).getText();
            assertTrue(shown.startsWith("downloading 41 % · 5.2 MB of 12.6 MB · "), shown);
            assertEquals("5242880", browser.findElement(By.cssSelector(".pull progress")).getAttribute("value"));
            assertTrue(text("#models").contains("hf.co/fulcrum-test/Console-GGUF"));
            assertLabelled();
            ((JavascriptExecutor) browser).executeScript("document.getElementById('models-h').scrollIntoView()");
            screenshot("console-model-pull");
            hold.release(false);
            wait.until(d -> d.findElement(status).getText().startsWith("ready: "));
            assertTrue(browser.findElement(status).getText().contains("sha256-" + file.sha256() + ".gguf"));
            api("DELETE", "/api/v1/admin/models/console-gguf", ADMIN_KEY, null, 204);
        }
    }

    /**
     * The condition of an automation as the API returns it: its event and the fields given, without nulls or empties.
     */
    private static JsonNode condition(JsonNode automation) {
        com.fasterxml.jackson.databind.node.ObjectNode condition = JSON.createObjectNode();
        for (String field : List.of("event", "alias_regex", "tag_regex", "collection", "run_filter", "run_states",
                "metric_threshold", "metric_change", "metric_zscore", "weave_metric")) {
            JsonNode value = withoutNulls(automation.get(field));
            if (value != null && !(value.isContainerNode() && value.isEmpty())) {
                condition.set(field, value);
            }
        }
        return condition;
    }

    private static JsonNode withoutNulls(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        if (node.isObject()) {
            com.fasterxml.jackson.databind.node.ObjectNode kept = JSON.createObjectNode();
            node.fields().forEachRemaining(e -> {
                JsonNode value = withoutNulls(e.getValue());
                if (value != null) {
                    kept.set(e.getKey(), value);
                }
            });
            return kept;
        }
        return node;
    }

    private static List<String> options(String id) {
        return new Select(browser.findElement(By.id(id))).getOptions().stream().map(o -> o.getAttribute("value"))
                .toList();
    }

    /**
     * Types into an input over what it held (a long value is set at once), or chooses a select's option by its value
     * (one call to the browser each: this runs for every field of many forms).
     */
    private static void fill(String id, String value) {
        WebElement field = browser.findElement(By.id(id));
        if ("select".equals(field.getTagName())) {
            assertEquals(value, ((JavascriptExecutor) browser).executeScript("""
                    arguments[0].value = arguments[1];
                    arguments[0].dispatchEvent(new Event('change', {bubbles: true}));
                    return arguments[0].value;""", field, value), "an option of " + id);
        } else if (value.length() > 64) {
            ((JavascriptExecutor) browser).executeScript("arguments[0].value = arguments[1]", field, value);
        } else {
            field.sendKeys(Keys.chord(Keys.CONTROL, "a"), value.isEmpty() ? Keys.DELETE.toString() : value);
        }
    }

    // -- helpers

    private static void signIn(String key) {
        console.signIn(key);
    }

    private static void signOut() {
        console.signOut();
    }

    private static void tabTo(WebElement target) {
        ((JavascriptExecutor) browser).executeScript("document.activeElement.blur()");
        for (int i = 0; i < 300; i++) {
            if (target.equals(browser.switchTo().activeElement())) {
                return;
            }
            new Actions(browser).sendKeys(Keys.TAB).perform();
        }
        fail("Tab never reached " + target);
    }

    private static boolean inside(WebElement dialog) {
        return (Boolean) ((JavascriptExecutor) browser)
                .executeScript("return arguments[0].contains(document.activeElement)", dialog);
    }

    private static void assertLabelled() {
        console.assertLabelled();
    }

    private static void assertNoAlert() {
        console.assertNoAlert();
    }

    private static void assertSecurityHeaders(HttpResponse<String> response) {
        String csp = response.headers().firstValue("Content-Security-Policy").orElse("");
        assertTrue(csp.contains("script-src 'self'"), csp);
        assertFalse(csp.contains("unsafe-inline"), csp);
        assertTrue(csp.contains("frame-ancestors 'none'"), csp);
        assertEquals("nosniff", response.headers().firstValue("X-Content-Type-Options").orElse(""));
        assertEquals("same-origin", response.headers().firstValue("Referrer-Policy").orElse(""));
    }

    private static WebElement row(long id) {
        return browser.findElement(By.cssSelector("tr.automation[data-id='" + id + "']"));
    }

    private static String text(String css) {
        return console.text(css);
    }

    private static void screenshot(String name) throws IOException {
        console.screenshot(name);
    }

    private static String automations() {
        return "/console/projects/" + TEAM + "/" + PROJECT + "/automations";
    }

    private static String automationsApi() {
        return "/api/v1/entities/" + TEAM + "/projects/" + PROJECT + "/automations";
    }

    private static Map<String, Object> automation(String name) {
        Map<String, Object> body = new java.util.HashMap<>();
        body.put("name", name);
        body.put("event", "ADD_ARTIFACT_TAG");
        body.put("team", TEAM);
        body.put("action_type", "Webhooks");
        body.put("webhook_id", webhookId);
        body.put("payload", "{\"tag\": \"${tag}\"}");
        return body;
    }

    private static long automationId(String name) throws Exception {
        for (JsonNode automation : api("GET", automationsApi(), ADMIN_KEY, null, 200).get("automations")) {
            if (automation.get("name").asText().equals(name)) {
                return automation.get("id").asLong();
            }
        }
        throw new AssertionError("no automation " + name);
    }

    private static String uploadVersion(String collection) throws Exception {
        String boundary = "----console-it";
        String body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\nmodel\r\n--"
                + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"model.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\nweights\r\n--" + boundary + "--\r\n";
        HttpResponse<String> response = HTTP.send(HttpRequest
                .newBuilder(uri("/api/v1/entities/" + TEAM + "/projects/" + PROJECT + "/artifacts/collections/"
                        + collection + "/versions"))
                .header("Authorization", "Bearer " + ADMIN_KEY)
                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(201, response.statusCode(), response.body());
        return JSON.readTree(response.body()).get("version").asText();
    }

    private static JsonNode api(String method, String path, String key, Object body, int expected) throws Exception {
        return console.api(method, path, key, body, expected);
    }

    private static JsonNode apiArray(String path, String key) throws Exception {
        return api("GET", path, key, null, 200);
    }

    private static HttpResponse<String> get(String path, String cookie) throws Exception {
        return console.get(path, cookie);
    }

    private static HttpResponse<String> withCookie(String cookie, String path) throws Exception {
        return get(path, cookie);
    }

    private static String receiverUrl() {
        return "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook";
    }

    private static String url(String path) {
        return console.url(path);
    }

    private static URI uri(String path) {
        return console.uri(path);
    }
}
