package dev.fulcrum.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

import com.fasterxml.jackson.databind.JsonNode;

import dev.fulcrum.accounts.ConsoleSessions;

/**
 * The runs and usage screens in a real browser against the packaged application: runs made and logged through the API
 * (one with 10,000 steps of two metrics), the list's filters, the run's chart (asserting the chart's data, not its
 * pixels), its config, summary and state changes, a chat completion of the built-in model and today's usage in the
 * usage chart and table; who may read them. Measures the time to the first chart of a run with 100,000 history rows
 * (target/console-it/runs-timing.txt) and the weight of each screen (target/console-it/runs-weights.txt).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleRunsIT {

    private static final String ADMIN_KEY = ConsoleApp.ADMIN_KEY;
    private static final ConsoleApp console = ConsoleApp.SHARED;
    private static final String TEAM = "vision";
    private static final String PROJECT = "mnist";
    private static final String RUNS = "/console/projects/" + TEAM + "/" + PROJECT + "/runs";
    private static final String API_RUNS = "/api/v1/entities/" + TEAM + "/projects/" + PROJECT + "/runs";
    private static final String MODEL = "fulcrum-tiny";

    /** Records every Content-Security-Policy violation of a page, from before its first script. */
    private static final String CSP_WATCH = """
            window.__csp = [];
            document.addEventListener('securitypolicyviolation',
                e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + e.sourceFile));
            """;

    private static ChromeDriver browser;
    private static WebDriverWait wait;
    private static String annKey;
    private static String outsiderKey;
    private static final Map<String, String> WEIGHTS = new LinkedHashMap<>();

    @BeforeAll
    static void start() throws Exception {
        console.join();
        browser = console.browser();
        wait = console.await();
        browser.executeCdpCommand("Page.addScriptToEvaluateOnNewDocument", Map.of("source", CSP_WATCH));

        // a team with a member (ann) and someone of no role in it, a project, and runs by both members
        api("POST", "/api/v1/users", ADMIN_KEY, Map.of("username", "ann"), 201);
        annKey = api("POST", "/api/v1/users/ann/api-keys", ADMIN_KEY, Map.of("name", "it"), 201).get("key").asText();
        api("POST", "/api/v1/users", ADMIN_KEY, Map.of("username", "olga"), 201);
        outsiderKey = api("POST", "/api/v1/users/olga/api-keys", ADMIN_KEY, Map.of("name", "it"), 201).get("key")
                .asText();
        api("POST", "/api/v1/teams", ADMIN_KEY, Map.of("name", TEAM), 201);
        api("PUT", "/api/v1/teams/" + TEAM + "/members/ann", ADMIN_KEY, Map.of("role", "member"), 200);
        api("POST", "/api/v1/entities/" + TEAM + "/projects", ADMIN_KEY, Map.of("name", PROJECT), 201);

        api("POST", API_RUNS, ADMIN_KEY, Map.of("name", "baseline", "display_name", "Baseline CNN", "config",
                Map.of("lr", 0.001, "optimizer", "adam", "layers", List.of(32, 64))), 201);
        api("POST", API_RUNS, annKey, Map.of("name", "sweep-1"), 201);
        api("POST", API_RUNS, annKey, Map.of("name", "sweep-2"), 201);
        api("PATCH", API_RUNS + "/sweep-1", annKey, Map.of("state", "finished"), 200);
        api("PATCH", API_RUNS + "/sweep-2", annKey, Map.of("state", "crashed"), 200);
        log("baseline", 10_000, 2_500);
        api("PATCH", API_RUNS + "/baseline", ADMIN_KEY, Map.of("state", "finished"), 200);
    }

    @AfterAll
    static void stop() throws IOException {
        if (!WEIGHTS.isEmpty()) {
            StringBuilder report = new StringBuilder(
                    "Page weight of the runs and usage screens, first visit (cache cleared), bytes:\n");
            WEIGHTS.forEach(
                    (screen, weight) -> report.append("  ").append(screen).append(": ").append(weight).append('\n'));
            System.out.print(report);
            Files.writeString(ConsoleApp.LOGS.resolve("runs-weights.txt"), report);
        }
    }

    /** Logs {@code rows} steps of loss and acc to a run, {@code batch} rows per request. */
    private static void log(String run, int rows, int batch) throws Exception {
        for (int first = 0; first < rows; first += batch) {
            List<Map<String, Object>> batchRows = new ArrayList<>(batch);
            for (int step = first; step < Math.min(rows, first + batch); step++) {
                batchRows.add(Map.of("_step", step, "loss", 2.5 / (1 + step / 500.0) + 0.05 * Math.sin(step / 7.0),
                        "acc", 1 - 0.9 / (1 + step / 800.0)));
            }
            JsonNode logged = api("POST", API_RUNS + "/" + run + "/history", ADMIN_KEY, batchRows, 200);
            assertEquals(batchRows.size(), logged.get("rows").asInt());
        }
    }

    @Test
    @Order(1)
    void listsAProjectsRunsFilteredByNameCreatorAndState() throws Exception {
        console.signIn(ADMIN_KEY);
        browser.get(console.url(RUNS));
        assertEquals("Runs of " + TEAM + "/" + PROJECT, console.text("h1"));
        assertEquals(List.of("sweep-2", "sweep-1", "baseline"), runNames(), "newest first");
        assertTrue(console.text("tr[data-name=baseline]").contains("10000"), "its history rows");
        assertTrue(console.text("tr[data-name=baseline]").contains("admin"), "its creator");
        console.assertLabelled();
        assertNoCspViolation();
        weigh("runs list (3 runs)");
        console.screenshot("console-runs");

        filter("^sweep-\\d$", "", "");
        assertEquals(List.of("sweep-2", "sweep-1"), runNames());
        filter("", "ann", "");
        assertEquals(List.of("sweep-2", "sweep-1"), runNames());
        filter("", "ann", "crashed");
        assertEquals(List.of("sweep-2"), runNames());
        assertEquals("crashed",
                new Select(browser.findElement(By.id("filter-state"))).getFirstSelectedOption().getText(),
                "the form keeps the filters");
        filter("", "", "finished");
        assertEquals(List.of("sweep-1", "baseline"), runNames());
        filter("nothing-like-this", "", "");
        assertTrue(console.text("#no-runs").contains("match these filters"));
        filter("(unclosed", "", "");
        assertTrue(console.text("#filter-name-err").contains("Not a valid RE2 regular expression"),
                "the API's 422 at its field: " + console.text("main"));
        assertEquals("(unclosed", browser.findElement(By.id("filter-name")).getAttribute("value"));
    }

    @Test
    @Order(2)
    void drawsTheChosenMetricsOfARunWith10000Steps() throws Exception {
        browser.get(console.url(RUNS));
        browser.findElement(By.linkText("baseline")).click();
        wait.until(d -> d.getCurrentUrl().contains(RUNS + "/baseline"));
        assertEquals("Run baseline (Baseline CNN)", console.text("h1"));
        assertEquals("finished", console.text("#run-state"));
        assertTrue(console.text("#config").contains("optimizer"));
        assertTrue(console.text("#config").contains("[32,64]"), "nested values compactly");
        assertTrue(console.text("#summary").contains("9999"), "the last step");
        List<String> changes = browser.findElements(By.cssSelector("tr.state-change")).stream().map(WebElement::getText)
                .toList();
        assertEquals(2, changes.size(), changes.toString());
        assertTrue(changes.get(0).matches(".*created running admin"), changes.get(0));
        assertTrue(changes.get(1).matches(".*running finished admin"), changes.get(1));

        // the first metric is drawn at once; choosing the second draws both
        WebElement chart = browser.findElement(By.id("run-chart"));
        wait.until(d -> "acc".equals(chart.getAttribute("data-series")));
        assertEquals("10000", chart.getAttribute("data-points"));
        browser.findElement(By.cssSelector("input[name=metric][value=loss]")).click();
        wait.until(d -> "acc,loss".equals(chart.getAttribute("data-series")));
        assertEquals("10000", chart.getAttribute("data-points"));
        assertEquals("10000", chart.getAttribute("data-rows"));
        assertEquals(1, browser.findElements(By.cssSelector("#run-chart canvas")).size(), "drawn on a canvas");
        assertTrue(browser.getCurrentUrl().endsWith("?metrics=acc%2Closs"), browser.getCurrentUrl());
        assertTrue(console.text("#chart-status").contains("10,000 rows"), console.text("#chart-status"));
        browser.findElement(By.cssSelector("input[name=metric][value=acc]")).click();
        wait.until(d -> "loss".equals(chart.getAttribute("data-series")));
        assertEquals("10000", chart.getAttribute("data-points"));
        // smoothing (from the keyboard) redraws the same points
        String drawnAt = chart.getAttribute("data-drawn-at");
        browser.findElement(By.id("smoothing")).sendKeys(Keys.END);
        wait.until(d -> !drawnAt.equals(chart.getAttribute("data-drawn-at")));
        assertEquals("0.99", console.text("#smoothing-value"));
        assertEquals("10000", chart.getAttribute("data-points"));
        assertEquals("loss", chart.getAttribute("data-series"));
        console.assertLabelled();
        assertNoCspViolation();

        // the page keeps the choice (reload, a shared link); series follow the metrics' order
        browser.get(console.url(RUNS + "/baseline?metrics=loss,acc"));
        WebElement again = browser.findElement(By.id("run-chart"));
        wait.until(d -> "acc,loss".equals(again.getAttribute("data-series")));
        assertEquals("10000", again.getAttribute("data-points"));
        console.screenshot("console-run");

        // the chart's data route: columns for the chosen keys, through the session only, never cached
        String session = browser.manage().getCookieNamed(ConsoleSessions.COOKIE).getValue();
        HttpResponse<String> history = console.get(RUNS + "/baseline/history.json?keys=loss,acc", session);
        assertEquals(200, history.statusCode());
        assertEquals("no-store", history.headers().firstValue("Cache-Control").orElse(""));
        JsonNode columns = console.json.readTree(history.body());
        assertEquals(10_000, columns.get("rows").asInt());
        assertEquals(10_000, columns.get("x").size());
        assertEquals(9_999, columns.get("x").get(9_999).asLong());
        assertEquals("loss", columns.get("series").get(0).get("name").asText());
        assertEquals(2.5, columns.get("series").get(0).get("values").get(0).asDouble(), 1e-6);
        assertEquals(10_000, columns.get("series").get(1).get("values").size());
        assertNotEquals(200, console.get(RUNS + "/baseline/history.json?keys=loss", null).statusCode(),
                "no session, no data");
        assertEquals(404, console.get(RUNS + "/no-such-run/history.json?keys=loss", session).statusCode());
    }

    @Test
    @Order(3)
    void showsTodaysUsageOfTheBuiltInModelInTheUsageChartAndTable() throws Exception {
        HttpResponse<String> completion = console.http.send(HttpRequest.newBuilder(console.uri("/v1/chat/completions"))
                .header("Authorization", "Bearer " + ADMIN_KEY).header("Content-Type", "application/json")
                .header("Compat-Project", TEAM + "/chatbot").timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(console.json.writeValueAsString(Map.of("model", MODEL,
                        "max_tokens", 12, "messages", List.of(Map.of("role", "user", "content", "Hello there"))))))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, completion.statusCode(), completion.body());
        long tokens = console.json.readTree(completion.body()).get("usage").get("total_tokens").asLong();
        String today = LocalDate.now(ZoneOffset.UTC).toString();

        browser.get(console.url("/console/"));
        browser.findElement(By.linkText("Usage")).click();
        wait.until(d -> d.getCurrentUrl().endsWith("/console/usage"));
        new Select(browser.findElement(By.id("usage-entity"))).selectByVisibleText(TEAM);
        browser.findElement(By.cssSelector("#usage-filters button[type=submit]")).click();
        // usage is written about a second after the completion: load the page until it is there
        wait.until(d -> {
            if (d.findElements(By.cssSelector("tr.usage-day[data-day='" + today + "'][data-model='" + MODEL + "']"))
                    .isEmpty()) {
                d.navigate().refresh();
                return false;
            }
            return true;
        });
        assertEquals("Inference usage of " + TEAM, console.text("h1"));
        String row = console.text("tr.usage-day[data-model='" + MODEL + "']");
        assertTrue(row.startsWith(today + " " + MODEL + " 1 0 "), row);
        assertTrue(row.contains(" " + tokens + " "), "total tokens " + tokens + " in " + row);
        assertTrue(console.text("#usage-models").contains("Latency p50"));

        WebElement tokensChart = browser.findElement(By.id("tokens-chart"));
        wait.until(d -> tokensChart.getAttribute("data-series") != null);
        assertEquals(MODEL, tokensChart.getAttribute("data-series"));
        assertEquals("30", tokensChart.getAttribute("data-points"), "one point per day of the last 30");
        JsonNode drawn = console.json.readTree(tokensChart.getAttribute("data-chart"));
        JsonNode values = drawn.get("series").get(0).get("values");
        assertEquals(tokens, values.get(values.size() - 1).asLong(), "today's tokens are the last point");
        assertEquals(LocalDate.now(ZoneOffset.UTC).atStartOfDay().toEpochSecond(ZoneOffset.UTC),
                drawn.get("x").get(values.size() - 1).asLong());
        WebElement requestsChart = browser.findElement(By.id("requests-chart"));
        JsonNode requests = console.json.readTree(requestsChart.getAttribute("data-chart")).get("series").get(0)
                .get("values");
        assertEquals(1, requests.get(requests.size() - 1).asLong());
        assertEquals(1, browser.findElements(By.cssSelector("#tokens-chart canvas")).size());
        console.assertLabelled();
        assertNoCspViolation();
        console.screenshot("console-usage");
        weigh("usage (30 days, 1 model)");

        // a period of one day, the project alone; a period that ends before it starts is refused at its field
        browser.get(console.url("/console/usage?entity=" + TEAM + "&project=chatbot&from=" + today + "&to=" + today));
        assertEquals("1", browser.findElement(By.id("tokens-chart")).getAttribute("data-points"));
        assertEquals("chatbot",
                new Select(browser.findElement(By.id("usage-project"))).getFirstSelectedOption().getText());
        browser.get(console.url("/console/usage?entity=" + TEAM + "&from=2026-02-01&to=2026-01-01"));
        assertTrue(console.text("#usage-from-err").contains("starts after it ends"), console.text("main"));
    }

    @Test
    @Order(4)
    void timesTheFirstChartOfARunWith100000HistoryRows() throws Exception {
        api("POST", API_RUNS, ADMIN_KEY, Map.of("name", "long"), 201);
        long logStart = System.nanoTime();
        log("long", 100_000, 10_000);
        long logMillis = (System.nanoTime() - logStart) / 1_000_000;
        List<String> loads = new ArrayList<>();
        for (int load = 1; load <= 3; load++) {
            browser.executeCdpCommand("Network.clearBrowserCache", Map.of());
            long started = System.nanoTime();
            browser.get(console.url(RUNS + "/long?metrics=loss,acc"));
            WebElement chart = browser.findElement(By.id("run-chart"));
            wait.until(d -> "100000".equals(chart.getAttribute("data-points")));
            long wall = (System.nanoTime() - started) / 1_000_000;
            assertEquals("acc,loss", chart.getAttribute("data-series"));
            @SuppressWarnings("unchecked")
            Map<String, Object> timing = (Map<String, Object>) console.script(
                    """
                                const n = performance.getEntriesByType('navigation')[0];
                                const h = performance.getEntriesByType('resource').find(e => e.name.includes('history.json'));
                                return {firstChartMs: Number(arguments[0].dataset.drawnAt), domInteractiveMs: Math.round(n.domInteractive),
                                    historyFetchMs: Math.round(h.responseEnd - h.startTime),
                            parseAndDrawMs: Math.round(Number(arguments[0].dataset.drawnAt) - h.responseEnd),
                            historyTransferred: h.transferSize,
                                    historyDecoded: h.decodedBodySize};
                                """,
                    chart);
            loads.add("load " + load + ": " + timing + ", wall clock from navigation to data-points " + wall + " ms");
        }
        assertNoCspViolation();
        weigh("run with 100,000 rows, 2 metrics");
        String report = "Time to first chart of a run with 100,000 history rows (2 metrics; ms since navigation; "
                + "logged through the API in 10 batches in " + logMillis + " ms):\n  " + String.join("\n  ", loads)
                + "\n";
        System.out.print(report);
        Files.writeString(ConsoleApp.LOGS.resolve("runs-timing.txt"), report);
    }

    @Test
    @Order(5)
    void someoneWithoutARoleInTheTeamIsRefusedItsRunsAndUsage() throws Exception {
        browser.get(console.url(RUNS + "/baseline"));
        weigh("run with 10,000 rows, 1 metric");
        console.signOut();
        console.signIn(outsiderKey);
        browser.get(console.url(RUNS));
        assertTrue(console.text("main").contains("403"), console.text("main"));
        browser.get(console.url(RUNS + "/baseline"));
        assertTrue(console.text("main").contains("403"), console.text("main"));
        String session = browser.manage().getCookieNamed(ConsoleSessions.COOKIE).getValue();
        assertEquals(403, console.get(RUNS + "/baseline/history.json?keys=loss", session).statusCode());
        browser.get(console.url("/console/usage?entity=" + TEAM));
        assertTrue(console.text("main").contains("403"), console.text("main"));
        browser.get(console.url("/console/usage"));
        assertEquals("Inference usage of olga", console.text("h1"), "one's own usage");
        assertTrue(console.text("#no-usage").contains("No completions"));
        console.signOut();

        // a member of the team reads them
        console.signIn(annKey);
        browser.get(console.url(RUNS + "/baseline"));
        WebElement chart = browser.findElement(By.id("run-chart"));
        wait.until(d -> "10000".equals(chart.getAttribute("data-points")));
        console.signOut();
    }

    /**
     * A run's media as the W&B SDK writes them (files uploaded to the signed URLs of {@code createRunFiles}, history
     * rows naming them through the file stream): the image of each step behind a slider, the table a page of rows at a
     * time, the histogram drawn, the files listed.
     */
    @Test
    @Order(6)
    void showsARunsImagesWithAStepSliderItsTablePagedAndItsHistogramDrawn() throws Exception {
        api("POST", API_RUNS, ADMIN_KEY, Map.of("name", "media"), 201);
        List<String> names = List.of("media/images/img_0.png", "media/images/img_1.png",
                "media/table/tbl_1.table.json");
        JsonNode created = api("POST", "/graphql", ADMIN_KEY, Map.of("query", """
                mutation CreateRunFiles($entity: String!, $project: String!, $run: String!, $files: [String!]!) {
                  createRunFiles(input: {entityName: $entity, projectName: $project, runName: $run, files: $files}) {
                    files { name uploadUrl }
                  }
                }""", "variables", Map.of("entity", TEAM, "project", PROJECT, "run", "media", "files", names)), 200);
        List<List<Object>> rows = new ArrayList<>();
        for (int i = 0; i < 25; i++) {
            rows.add(List.of(i, "row " + i));
        }
        List<byte[]> contents = List.of(png(java.awt.Color.RED), png(java.awt.Color.GREEN),
                console.json.writeValueAsBytes(Map.of("columns", List.of("n", "label"), "data", rows)));
        for (int i = 0; i < names.size(); i++) {
            String url = created.at("/data/createRunFiles/files/" + i + "/uploadUrl").asText();
            HttpResponse<String> put = console.http.send(
                    HttpRequest.newBuilder(java.net.URI.create(url)).header("Content-Type", "application/octet-stream")
                            .PUT(HttpRequest.BodyPublishers.ofByteArray(contents.get(i))).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, put.statusCode(), put.body());
        }
        Map<String, Object> image0 = Map.of("_type", "image-file", "path", names.get(0), "caption", "red");
        Map<String, Object> image1 = Map.of("_type", "image-file", "path", names.get(1), "caption", "green");
        List<String> lines = List.of(console.json.writeValueAsString(Map.of("_step", 0, "loss", 1.0, "img", image0)),
                console.json.writeValueAsString(Map.of("_step", 1, "loss", 0.5, "img", image1, "tbl",
                        Map.of("_type", "table-file", "path", names.get(2)), "h",
                        Map.of("_type", "histogram", "values", List.of(1, 3, 5, 2), "bins", List.of(0, 1, 2, 3, 4)))));
        api("POST", "/files/" + TEAM + "/" + PROJECT + "/media/file_stream", ADMIN_KEY,
                Map.of("files", Map.of("wandb-history.jsonl", Map.of("offset", 0, "content", lines))), 200);

        console.signIn(ADMIN_KEY);
        browser.get(console.url(RUNS + "/media"));
        WebElement image = browser.findElement(By.cssSelector("#media figure img"));
        assertEquals("img at step 1", image.getAttribute("alt"), "the last step first");
        wait.until(d -> ((Number) console.script("return arguments[0].naturalWidth;", image)).intValue() == 8);
        browser.findElement(By.cssSelector(".media-slider")).sendKeys(Keys.ARROW_LEFT);
        wait.until(d -> "img at step 0".equals(image.getAttribute("alt")));
        assertEquals("0", console.text(".media-step"));
        assertTrue(image.getAttribute("src").contains("img_0.png"), image.getAttribute("src"));
        wait.until(d -> ((Number) console.script("return arguments[0].naturalWidth;", image)).intValue() == 8);

        assertTrue(console.text(".media-table").contains("Rows 1 to 10 of 25"), console.text(".media-table"));
        assertEquals(10, browser.findElements(By.cssSelector(".media-table tbody tr")).size());
        browser.findElement(By.linkText("Next rows")).click();
        wait.until(d -> console.text(".media-table").contains("Rows 11 to 20 of 25"));
        assertEquals("10", console.text(".media-table tbody tr td"));

        WebElement histogram = browser.findElement(By.cssSelector("svg[aria-label='Histogram of h at step 1']"));
        assertEquals(4, histogram.findElements(By.tagName("rect")).size());
        assertTrue(console.text("#run-files").contains("media/table/tbl_1.table.json"));
        console.assertLabelled();
        assertNoCspViolation();
        console.screenshot("console-run-media");
        console.signOut();
    }

    private static byte[] png(java.awt.Color color) throws IOException {
        java.awt.image.BufferedImage image = new java.awt.image.BufferedImage(8, 8,
                java.awt.image.BufferedImage.TYPE_INT_RGB);
        for (int x = 0; x < 8; x++) {
            for (int y = 0; y < 8; y++) {
                image.setRGB(x, y, color.getRGB());
            }
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        javax.imageio.ImageIO.write(image, "png", out);
        return out.toByteArray();
    }

    /**
     * Stop on a running run's page: members see it and their click asks the stop through the runs API (which the W&B
     * SDK then sees, see WandbRunStopSdkTest); a viewer sees no button, and a stop posted anyway is refused.
     */
    @Test
    @Order(7)
    void aMemberStopsARunningRunAndAViewerCannot() throws Exception {
        api("POST", API_RUNS, annKey, Map.of("name", "long-job"), 201);
        api("POST", "/api/v1/users", ADMIN_KEY, Map.of("username", "rita"), 201);
        String viewerKey = api("POST", "/api/v1/users/rita/api-keys", ADMIN_KEY, Map.of("name", "it"), 201).get("key")
                .asText();
        api("PUT", "/api/v1/teams/" + TEAM + "/members/rita", ADMIN_KEY, Map.of("role", "viewer"), 200);

        console.signIn(viewerKey);
        browser.get(console.url(RUNS + "/long-job"));
        assertEquals("running", console.text("#run-state"));
        assertTrue(browser.findElements(By.xpath("//button[normalize-space()='Stop run']")).isEmpty(),
                "a viewer is offered no Stop");
        // a stop posted anyway (with the session's own token, as a page of its would send it) is the API's refusal
        console.script("""
                const form = document.createElement('form');
                form.method = 'post';
                form.action = arguments[0];
                const token = document.createElement('input');
                token.type = 'hidden';
                token.name = '_csrf';
                token.value = document.querySelector('input[name=_csrf]').value;
                form.appendChild(token);
                document.body.appendChild(form);
                form.submit();""", RUNS + "/long-job/stop");
        wait.until(d -> !d.findElements(By.id("error")).isEmpty());
        assertTrue(console.text("#error").contains("This needs the member role"), console.text("#error"));
        assertTrue(api("GET", API_RUNS + "/long-job/stop", ADMIN_KEY, null, 200).get("stop_requested_at").isNull());
        console.signOut();

        console.signIn(annKey);
        browser.get(console.url(RUNS + "/long-job"));
        browser.findElement(By.xpath("//button[normalize-space()='Stop run']")).click();
        wait.until(d -> !d.findElements(By.id("stop-requested")).isEmpty());
        assertTrue(browser.findElements(By.xpath("//button[normalize-space()='Stop run']")).isEmpty());
        assertEquals("running", console.text("#run-state"), "the run runs until its process stops");
        assertFalse(api("GET", API_RUNS + "/long-job/stop", annKey, null, 200).get("stop_requested_at").isNull());
        console.assertLabelled();
        console.screenshot("console-run-stop");
        console.signOut();
    }

    private static void filter(String name, String creator, String state) {
        browser.get(console.url(RUNS));
        browser.findElement(By.id("filter-name")).sendKeys(name);
        browser.findElement(By.id("filter-creator")).sendKeys(creator);
        new Select(browser.findElement(By.id("filter-state"))).selectByValue(state);
        String before = browser.getCurrentUrl();
        browser.findElement(By.cssSelector("#run-filters button[type=submit]")).click();
        wait.until(d -> !d.getCurrentUrl().equals(before));
    }

    private static List<String> runNames() {
        return browser.findElements(By.cssSelector("tr.run")).stream().map(row -> row.getAttribute("data-name"))
                .toList();
    }

    private static void assertNoCspViolation() {
        assertEquals(List.of(), console.script("return window.__csp || ['the watch did not run'];"),
                "Content-Security-Policy violations on " + browser.getCurrentUrl());
    }

    /** Loads the current page again with an empty cache and records what it transferred and decoded. */
    private static void weigh(String screen) {
        String url = browser.getCurrentUrl();
        browser.executeCdpCommand("Network.clearBrowserCache", Map.of());
        browser.get(url);
        wait.until(d -> d.findElements(By.cssSelector(".chart")).stream()
                .allMatch(chart -> chart.getAttribute("data-points") != null));
        @SuppressWarnings("unchecked")
        Map<String, Object> weight = (Map<String, Object>) console.script("""
                const n = performance.getEntriesByType('navigation')[0];
                const r = performance.getEntriesByType('resource');
                const sum = (list, key) => list.reduce((s, e) => s + e[key], 0);
                const of = kind => r.filter(e => kind(e.name));
                const scripts = of(u => u.endsWith('.js')), styles = of(u => u.endsWith('.css')),
                    data = of(u => u.includes('.json'));
                return {html: n.decodedBodySize, htmlTransferred: n.transferSize,
                    scripts: sum(scripts, 'decodedBodySize'), scriptsTransferred: sum(scripts, 'transferSize'),
                    styles: sum(styles, 'decodedBodySize'), stylesTransferred: sum(styles, 'transferSize'),
                    data: sum(data, 'decodedBodySize'), dataTransferred: sum(data, 'transferSize'),
                    total: n.decodedBodySize + sum(r, 'decodedBodySize'),
                    totalTransferred: n.transferSize + sum(r, 'transferSize')};
                """);
        WEIGHTS.put(screen, weight.toString());
    }

    private static JsonNode api(String method, String path, String key, Object body, int expected) throws Exception {
        return console.api(method, path, key, body, expected);
    }
}
