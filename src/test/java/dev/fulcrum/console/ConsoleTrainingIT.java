package dev.fulcrum.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
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

/**
 * The training screens and the playground in Chromium against the packaged application: an SFT job of the built-in
 * model started through the API, its events and loss curve growing on the job page without a reload until
 * {@code training_ended}, the new checkpoint's "Chat" button opening the playground, a streamed answer arriving in
 * pieces with its usage and latency, and a job cancelled through its dialog.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleTrainingIT {

    private static final String ADMIN_KEY = ConsoleApp.ADMIN_KEY;
    private static final ConsoleApp console = ConsoleApp.SHARED;
    private static final String TEAM = "tuners";
    private static final String PROJECT = "chat-tuning";
    private static final List<String> WEIGHTS = new ArrayList<>();

    private static ChromeDriver browser;
    private static WebDriverWait wait;
    private static String modelId;
    private static String jobId;
    private static String digest;

    @BeforeAll
    static void start() throws Exception {
        console.join();
        browser = console.browser();
        wait = console.await();
        console.api("POST", "/api/v1/teams", ADMIN_KEY, Map.of("name", TEAM), 201);
        console.api("POST", "/api/v1/entities/" + TEAM + "/projects", ADMIN_KEY, Map.of("name", PROJECT), 201);
        // training data: a dataset of chats, referenced by its digest
        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            rows.add(Map.of("messages", List.of(Map.of("role", "user", "content", "What is " + i + " plus " + i + "?"),
                    Map.of("role", "assistant", "content", "It is " + (2 * i) + ", the sea says."))));
        }
        digest = console.api("POST", "/v2/" + TEAM + "/" + PROJECT + "/datasets", ADMIN_KEY,
                Map.of("name", "sums", "rows", rows), 200).get("digest").asText();
        Map<String, Object> model = new HashMap<>();
        model.put("entity", TEAM);
        model.put("project", PROJECT);
        model.put("name", "sea-sums");
        model.put("base_model", "fulcrum-tiny");
        modelId = console.api("POST", "/v1/preview/models", ADMIN_KEY, model, 201).get("id").asText();
    }

    @AfterAll
    static void stop() throws Exception {
        if (!WEIGHTS.isEmpty()) {
            String report = "Page weight of the training screens (bytes; HTML + scripts + styles, decoded / transferred"
                    + " on a first visit):\n  " + String.join("\n  ", WEIGHTS);
            System.out.println(report);
            Files.writeString(ConsoleApp.LOGS.resolve("training-weights.txt"), report + "\n");
        }
    }

    private static String training() {
        return "/console/projects/" + TEAM + "/" + PROJECT + "/training";
    }

    /** An SFT job of {@code epochs} x 120 gradient steps; jobs of one model run one at a time, in order. */
    private static String startJob(int epochs) throws Exception {
        return console.api("POST", "/v1/preview/sft-training-jobs", ADMIN_KEY,
                Map.of("model_id", modelId, "training_data_url",
                        "weave:///" + TEAM + "/" + PROJECT + "/object/sums:" + digest, "config",
                        Map.of("batch_size", 1, "epochs", epochs)),
                202).get("id").asText();
    }

    private static WebDriverWait upTo(int seconds) {
        WebDriverWait longer = new WebDriverWait(browser, Duration.ofSeconds(seconds));
        longer.ignoring(org.openqa.selenium.StaleElementReferenceException.class,
                org.openqa.selenium.WebDriverException.class);
        return longer;
    }

    private static int points(String chart) {
        String value = browser.findElement(By.id(chart)).getAttribute("data-points");
        return value == null || value.isEmpty() ? 0 : Integer.parseInt(value);
    }

    /** What the page loaded (the Performance API, the cache cleared first): decoded and transferred bytes. */
    private static void weigh(String screen) {
        browser.executeCdpCommand("Network.enable", Map.of());
        browser.executeCdpCommand("Network.clearBrowserCache", Map.of());
        browser.navigate().refresh();
        wait.until(d -> "complete".equals(console.script("return document.readyState")));
        @SuppressWarnings("unchecked")
        Map<String, Object> weight = (Map<String, Object>) console.script("""
                const n = performance.getEntriesByType('navigation')[0];
                const r = performance.getEntriesByType('resource').filter(e => e.initiatorType !== 'fetch');
                return {html: n.decodedBodySize, htmlTransferred: n.transferSize,
                    resources: r.reduce((s, e) => s + e.decodedBodySize, 0),
                    resourcesTransferred: r.reduce((s, e) => s + e.transferSize, 0), files: r.length,
                    total: n.decodedBodySize + r.reduce((s, e) => s + e.decodedBodySize, 0)};
                """);
        WEIGHTS.add(screen + ": " + weight);
    }

    @Test
    @Order(1)
    void theJobPageFollowsAnSftJobLiveUntilItEnds() throws Exception {
        console.signIn(ADMIN_KEY);
        // a first job keeps the watched one queued while its page opens, so the page sees it from its first step
        startJob(2);
        jobId = startJob(2);
        browser.get(console.url(training() + "/jobs/" + jobId));
        console.assertLabelled();
        assertEquals("queued", console.text("#job-state"), "the page opened before the job started");
        assertEquals(0, points("loss-chart"));
        upTo(60).until(d -> points("loss-chart") >= 2);
        int seen = points("loss-chart");
        String url = browser.getCurrentUrl();
        // without reloading, more gradient steps arrive: the events table and the curve grow
        upTo(60).until(d -> points("loss-chart") > seen);
        assertTrue(browser.findElements(By.cssSelector("#events tr.event[data-type=gradient_step]")).size() > seen);
        console.screenshot("console-training-job");
        upTo(240).until(d -> !d.findElements(By.cssSelector("#events tr.event[data-type=training_ended]")).isEmpty());
        assertEquals(url, browser.getCurrentUrl(), "the page was not reloaded");
        assertEquals("loss", browser.findElement(By.id("loss-chart")).getAttribute("data-series"));
        wait.until(d -> "true".equals(d.findElement(By.id("job")).getAttribute("data-finished")));
        assertEquals("succeeded", console.text("#job-state"));
        int steps = browser.findElements(By.cssSelector("#events tr.event[data-type=gradient_step]")).size();
        assertEquals(steps, points("loss-chart"), "one point per gradient step");
        JsonNode started = console
                .api("GET", "/v1/preview/training-jobs/" + jobId + "/events?limit=1", ADMIN_KEY, null, 200).get("data")
                .get(0);
        assertEquals(started.get("data").get("num_sequences").asInt(), steps);
        // the loss curve comes from the events' metrics, as the API answers them
        Object first = console.script("return JSON.parse(document.querySelector("
                + "'#events tr.event[data-type=gradient_step]')?.dataset.metrics || 'null')");
        assertTrue(first == null || first instanceof Map, "the first gradient step's metrics");
        browser.navigate().refresh();
        wait.until(d -> points("loss-chart") == steps);
        weigh("job page (" + steps + " gradient steps)");
    }

    @Test
    @Order(2)
    void theModelListsItsCheckpointsAndJobs() throws Exception {
        browser.get(console.url(training()));
        console.assertLabelled();
        assertTrue(console.text("#models").contains("sea-sums"));
        weigh("training models");
        console.screenshot("console-training");
        browser.findElement(By.linkText("sea-sums")).click();
        wait.until(d -> !d.findElements(By.id("checkpoints")).isEmpty());
        console.assertLabelled();
        WebElement job = browser.findElement(By.cssSelector("#jobs tr.job[data-id='" + jobId + "']"));
        assertTrue(job.findElement(By.className("state")).getText().contains("succeeded"));
        // the watched job made step 2 (the first job step 1)
        String reference = browser.findElement(By.id("ref-2")).getAttribute("value");
        assertEquals("wandb-artifact:///" + TEAM + "/" + PROJECT + "/sea-sums:step2", reference);
        assertEquals(2, console.api("GET", "/v1/preview/training-jobs/" + jobId, ADMIN_KEY, null, 200)
                .get("checkpoint_step").asInt());
        weigh("training model");
        console.screenshot("console-training-model");
    }

    @Test
    @Order(3)
    void theCheckpointChatsInThePlaygroundWithAStreamedAnswer() throws Exception {
        browser.get(console.url(training() + "/models/" + modelId));
        browser.findElement(By.cssSelector("tr.checkpoint[data-step='2'] a.chat")).click();
        wait.until(d -> d.getCurrentUrl().contains("/console/playground"));
        console.assertLabelled();
        assertEquals("wandb-artifact:///" + TEAM + "/" + PROJECT + "/sea-sums:step2",
                browser.findElement(By.id("model-ref")).getAttribute("value"));
        assertEquals(TEAM + "/" + PROJECT, browser.findElement(By.id("project")).getAttribute("value"));
        browser.findElement(By.id("user")).sendKeys("What is 3 plus 3?");
        // greedy decoding: the same answer on every run, not a sample that may end at its first token
        browser.findElement(By.id("temperature")).clear();
        browser.findElement(By.id("temperature")).sendKeys("0");
        browser.findElement(By.id("max-tokens")).clear();
        browser.findElement(By.id("max-tokens")).sendKeys("24");
        browser.findElement(By.id("send")).click();
        upTo(60).until(d -> "true".equals(d.findElement(By.id("answer")).getAttribute("data-done")));
        assertTrue(browser.findElement(By.id("playground-error")).getAttribute("hidden") != null,
                console.text("#playground-error"));
        int chunks = Integer.parseInt(browser.findElement(By.id("answer")).getAttribute("data-chunks"));
        assertTrue(chunks > 1, "the answer arrived in " + chunks + " pieces");
        assertFalse(console.text("#answer").isBlank());
        assertTrue(console.text("#usage").matches("\\d+ prompt \\+ \\d+ completion = \\d+ tokens"),
                console.text("#usage"));
        assertTrue(console.text("#latency").contains("ms"), console.text("#latency"));
        String curl = console.text("#snippet-curl");
        assertTrue(curl.contains("Bearer $FULCRUM_API_KEY") && curl.contains("Compat-Project: " + TEAM + "/" + PROJECT)
                && curl.contains("sea-sums:step2"), curl);
        assertTrue(console.text("#snippet-python").contains("os.environ[\"FULCRUM_API_KEY\"]"));
        assertTrue(console.text("#snippet-node").contains("process.env.FULCRUM_API_KEY"));
        assertFalse(browser.getPageSource().contains(ADMIN_KEY), "the page never holds a key");
        console.script("document.getElementById('user').scrollIntoView()");
        console.screenshot("console-playground");
        // the completion was counted for the project, as the signed-in user
        wait.until(d -> {
            try {
                return console.api("GET", "/api/v1/usage?entity=" + TEAM + "&project=" + PROJECT, ADMIN_KEY, null, 200)
                        .get("data").size() > 0;
            } catch (Exception e) {
                return false;
            }
        });
        weigh("playground");
    }

    @Test
    @Order(4)
    void aJobIsCancelledThroughItsDialog() throws Exception {
        // the second of two jobs waits for the first: it is cancelled while queued
        startJob(3);
        String second = startJob(1);
        browser.get(console.url(training() + "/models/" + modelId));
        WebElement row = browser.findElement(By.cssSelector("#jobs tr.job[data-id='" + second + "']"));
        row.findElement(By.cssSelector("button.cancel")).click();
        WebElement dialog = browser.findElement(By.id("cancel-" + second));
        wait.until(d -> dialog.isDisplayed());
        dialog.findElement(By.cssSelector("button[type=submit]")).click();
        wait.until(d -> d.getCurrentUrl().endsWith("/jobs/" + second));
        upTo(60).until(d -> {
            d.navigate().refresh();
            return d.findElement(By.id("job-state")).getText().startsWith("cancelled");
        });
        assertEquals("cancelled",
                console.api("GET", "/v1/preview/training-jobs/" + second, ADMIN_KEY, null, 200).get("status").asText());
    }
}
