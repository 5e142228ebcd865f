package dev.fulcrum.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.WebDriverWait;

import com.fasterxml.jackson.databind.JsonNode;

import dev.fulcrum.accounts.ConsoleSessions;

/**
 * A project's traces in a real browser against the packaged application, over calls written through Weave's
 * {@code /v2/.../calls/complete} (the Python SDK's batch path): the list of trace roots newest first and its op, time
 * and status filters; an evaluation's page with its summary by scorer, its rows (the dataset rows its calls name by
 * ref, read back) and the tree of its calls; a call whose input would be markup if it were not escaped; a viewer who
 * reads, an outsider refused with the API's 403, and a call that does not exist (404).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleTracesIT {

    private static final String ADMIN_KEY = ConsoleApp.ADMIN_KEY;
    private static final ConsoleApp console = ConsoleApp.SHARED;
    private static final String TEAM = "trace-lab";
    private static final String PROJECT = "evals";
    private static final String PROJECT_ID = TEAM + "/" + PROJECT;
    private static final String BASE = "/console/projects/" + TEAM + "/" + PROJECT;
    private static final String HOSTILE = "<script>alert('x')</script><img src=x onerror=alert(1)>";

    private static ChromeDriver browser;
    private static WebDriverWait wait;
    private static String viewerKey;
    private static String outsiderKey;

    @BeforeAll
    static void start() throws Exception {
        console.join();
        browser = console.browser();
        wait = console.await();

        console.api("POST", "/api/v1/users", ADMIN_KEY, Map.of("username", "tess"), 201);
        viewerKey = console.api("POST", "/api/v1/users/tess/api-keys", ADMIN_KEY, Map.of("name", "console"), 201)
                .get("key").asText();
        console.api("POST", "/api/v1/users", ADMIN_KEY, Map.of("username", "oscar"), 201);
        outsiderKey = console.api("POST", "/api/v1/users/oscar/api-keys", ADMIN_KEY, Map.of("name", "console"), 201)
                .get("key").asText();
        console.api("POST", "/api/v1/teams", ADMIN_KEY, Map.of("name", TEAM), 201);
        console.api("PUT", "/api/v1/teams/" + TEAM + "/members/tess", ADMIN_KEY, Map.of("role", "viewer"), 200);
        console.api("POST", "/api/v1/entities/" + TEAM + "/projects", ADMIN_KEY, Map.of("name", PROJECT), 201);

        // the dataset the evaluation ran over, and the refs its calls name each row by
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("question", i + "+" + i);
            row.put("expected", Integer.toString(2 * i));
            rows.add(row);
        }
        String digest = console
                .api("POST", "/v2/" + PROJECT_ID + "/datasets", ADMIN_KEY, Map.of("name", "sums", "rows", rows), 200)
                .get("digest").asText();
        String table = console
                .api("GET", "/v2/" + PROJECT_ID + "/datasets/sums/versions/" + digest, ADMIN_KEY, null, 200).get("rows")
                .asText();
        JsonNode stored = console
                .api("POST", "/table/query", ADMIN_KEY,
                        Map.of("project_id", PROJECT_ID, "digest", table.substring(table.lastIndexOf('/') + 1)), 200)
                .get("rows");

        String op = "weave:///" + PROJECT_ID + "/op/";
        String evaluation = "weave:///" + PROJECT_ID + "/object/sum-eval:e1";
        List<Map<String, Object>> batch = new ArrayList<>();
        batch.add(call("chat-1", "t-chat-1", null, op + "chat:c1", "2026-01-01T09:00:00Z", "2026-01-01T09:00:02Z",
                Map.of("prompt", "hello"), null, "ValueError: no answer"));
        batch.add(call("ev-1", "t-ev", null, op + "Evaluation.evaluate:v1", "2026-01-02T10:00:00Z",
                "2026-01-02T10:00:05Z", Map.of("self", evaluation, "model", op + "adder:a1"),
                Map.of("exact", Map.of("correct", Map.of("true_count", 2, "true_fraction", 0.6667)), "length",
                        Map.of("len", Map.of("mean", 1.0)), "model_latency", Map.of("mean", 0.01)),
                null));
        for (int i = 0; i < 3; i++) {
            String example = "weave:///" + PROJECT_ID + "/object/sums:" + digest + "/attr/rows/id/"
                    + stored.get(i).get("digest").asText();
            String answer = Integer.toString(i == 2 ? 5 : 2 * i);
            Map<String, Object> scores = new LinkedHashMap<>(); // the scorers' order, as the SDK writes it
            scores.put("exact", Map.of("correct", i != 2));
            scores.put("length", Map.of("len", 1));
            batch.add(call("ps-" + i, "t-ev", "ev-1", op + "Evaluation.predict_and_score:p1",
                    "2026-01-02T10:00:0" + (i + 1) + "Z", "2026-01-02T10:00:0" + (i + 2) + "Z",
                    Map.of("self", evaluation, "model", op + "adder:a1", "example", example),
                    Map.of("output", answer, "scores", scores, "model_latency", 0.01), null));
            batch.add(call("adder-" + i, "t-ev", "ps-" + i, op + "adder:a1", "2026-01-02T10:00:0" + (i + 1) + "Z",
                    "2026-01-02T10:00:0" + (i + 1) + "Z", Map.of("question", i + "+" + i), answer, null));
        }
        batch.add(call("chat-2", "t-chat-2", null, op + "chat:c1", "2026-01-03T08:00:00Z", "2026-01-03T08:00:01Z",
                Map.of("prompt", HOSTILE), "fine", null));
        console.api("POST", "/v2/" + PROJECT_ID + "/calls/complete", ADMIN_KEY, Map.of("batch", batch), 200);
    }

    private static Map<String, Object> call(String id, String trace, String parent, String op, String started,
            String ended, Object inputs, Object output, String exception) {
        Map<String, Object> call = new HashMap<>();
        call.put("project_id", PROJECT_ID);
        call.put("id", id);
        call.put("trace_id", trace);
        call.put("parent_id", parent);
        call.put("op_name", op);
        call.put("started_at", started);
        call.put("ended_at", ended);
        call.put("attributes", Map.of());
        call.put("inputs", inputs);
        call.put("output", output);
        call.put("summary", Map.of());
        call.put("exception", exception);
        return call;
    }

    private static List<String> listed() {
        return browser.findElements(By.cssSelector("tr.call")).stream().map(tr -> tr.getAttribute("data-id")).toList();
    }

    @Test
    @Order(1)
    void listsTraceRootsNewestFirstAndFiltersThem() throws Exception {
        console.signIn(ADMIN_KEY);
        browser.get(console.url(BASE));
        browser.findElement(By.cssSelector("nav.tabs a[href='" + BASE + "/traces']")).click();
        wait.until(d -> d.getCurrentUrl().endsWith(BASE + "/traces"));
        assertEquals("Traces of " + PROJECT_ID, console.text("h1"));
        assertEquals(List.of("chat-2", "ev-1", "chat-1"), listed());
        assertEquals("error",
                browser.findElement(By.cssSelector("tr.call[data-id='chat-1']")).getAttribute("data-status"));
        console.assertLabelled();
        console.screenshot("console-traces");

        // op, through the form
        browser.findElement(By.id("filter-op")).sendKeys("chat");
        browser.findElement(By.cssSelector("#trace-filters button[type=submit]")).click();
        wait.until(d -> d.getCurrentUrl().contains("op=chat"));
        assertEquals(List.of("chat-2", "chat-1"), listed());
        // status
        browser.get(console.url(BASE + "/traces?status=error"));
        assertEquals(List.of("chat-1"), listed());
        // a time window (UTC), which the form shows again
        browser.get(console.url(BASE + "/traces?from=2026-01-02T00:00&to=2026-01-03T00:00"));
        assertEquals(List.of("ev-1"), listed());
        assertEquals("2026-01-02T00:00", browser.findElement(By.id("filter-from")).getAttribute("value"));
        // every call, not only the roots
        browser.get(console.url(BASE + "/traces?all=on&op=adder"));
        assertEquals(List.of("adder-2", "adder-1", "adder-0"), listed());
        browser.get(console.url(BASE + "/traces?op=nothing-like-it"));
        assertTrue(console.text("#no-calls").contains("match these filters"));

        // a date that is none and a status that is none: the console's 422, not a 500
        String cookie = browser.manage().getCookieNamed(ConsoleSessions.COOKIE).getValue();
        HttpResponse<String> badDate = console.get(BASE + "/traces?from=yesterday", cookie);
        assertEquals(422, badDate.statusCode());
        assertTrue(badDate.body().contains("Not a date and time"), badDate.body());
        assertEquals(422, console.get(BASE + "/traces?status=fine", cookie).statusCode());
    }

    @Test
    @Order(2)
    void anEvaluationShowsItsSummaryByScorerItsRowsAndItsCallTree() throws Exception {
        browser.get(console.url(BASE + "/traces"));
        browser.findElement(By.linkText("Evaluation.evaluate")).click();
        wait.until(d -> d.getCurrentUrl().endsWith("/traces/ev-1"));
        assertEquals("success", console.text("#call-status"));
        assertEquals("5000 ms", console.text("#call-latency"));

        WebElement trueCount = browser.findElement(
                By.cssSelector("#evaluation-summary tr[data-scorer='exact'][data-metric='correct.true_count']"));
        assertEquals("2", trueCount.findElements(By.tagName("td")).get(2).getText());
        assertFalse(browser.findElements(By.cssSelector("#evaluation-summary tr[data-scorer='length']")).isEmpty());

        assertEquals(List.of("#", "Row", "Output", "exact", "length", "Call"), browser
                .findElements(By.cssSelector("#evaluation-rows thead th")).stream().map(WebElement::getText).toList());
        List<WebElement> rows = browser.findElements(By.cssSelector("tr.evaluation-row"));
        assertEquals(3, rows.size());
        // the row the call names by ref, read back from the dataset: its keys, in order
        WebElement row = rows.get(2).findElements(By.tagName("td")).get(1);
        assertTrue(row.getText().startsWith("{\"question\":\"2+2\",\"expected\":\"4\"}"), row.getText());
        assertEquals("5", rows.get(2).findElements(By.tagName("td")).get(2).getText());
        assertTrue(rows.get(2).findElements(By.tagName("td")).get(3).getText().contains("false"));

        // the tree: the evaluation, its three predict_and_score calls, each with its model call beneath
        List<String> tree = browser.findElements(By.cssSelector("tr.tree-call")).stream()
                .map(tr -> tr.getAttribute("data-id") + "@" + tr.getAttribute("data-depth")).toList();
        assertEquals(List.of("ev-1@0", "ps-0@1", "adder-0@2", "ps-1@1", "adder-1@2", "ps-2@1", "adder-2@2"), tree);
        console.assertLabelled();
        console.screenshot("console-trace-evaluation");

        browser.findElement(By.cssSelector("tr.tree-call[data-id='adder-1'] a")).click();
        wait.until(d -> d.getCurrentUrl().endsWith("/traces/adder-1"));
        assertEquals("ps-1", console.text("#call-parent"));
        assertTrue(console.text("#call-inputs").contains("\"question\" : \"1+1\""));
        assertTrue(browser.findElements(By.id("evaluation-summary")).isEmpty(), "only an evaluation has a summary");
    }

    @Test
    @Order(3)
    void aCallsInputsAreShownAsTextAndItsExceptionToo() throws Exception {
        browser.get(console.url(BASE + "/traces/chat-2"));
        assertTrue(console.text("#call-inputs").contains(HOSTILE), console.text("#call-inputs"));
        console.assertNoAlert();
        assertEquals("\"fine\"", console.text("#call-output"));
        assertEquals("1000 ms", console.text("#call-latency"));
        console.screenshot("console-trace-call");
        browser.get(console.url(BASE + "/traces/chat-1"));
        assertEquals("error", console.text("#call-status"));
        assertEquals("ValueError: no answer", console.text("#call-exception"));
        String cookie = browser.manage().getCookieNamed(ConsoleSessions.COOKIE).getValue();
        assertEquals(404, console.get(BASE + "/traces/no-such-call", cookie).statusCode());
    }

    @Test
    @Order(4)
    void aViewerReadsAndAnOutsiderIsRefused() throws Exception {
        console.signOut();
        console.signIn(viewerKey);
        browser.get(console.url(BASE + "/traces"));
        assertEquals(List.of("chat-2", "ev-1", "chat-1"), listed());
        browser.get(console.url(BASE + "/traces/ev-1"));
        assertEquals(3, browser.findElements(By.cssSelector("tr.evaluation-row")).size());
        assertTrue(browser.findElements(By.cssSelector("#main form[method=post]")).isEmpty(), "nothing to change");

        console.signOut();
        console.signIn(outsiderKey);
        String cookie = browser.manage().getCookieNamed(ConsoleSessions.COOKIE).getValue();
        assertEquals(403, console.get(BASE + "/traces", cookie).statusCode());
        assertEquals(403, console.get(BASE + "/traces/ev-1", cookie).statusCode());
    }
}
