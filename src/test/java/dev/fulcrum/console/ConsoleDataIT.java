package dev.fulcrum.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
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
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.WebDriverWait;

import dev.fulcrum.accounts.ConsoleSessions;

/**
 * The data screens in a real browser against the packaged application: a project's overview, a dataset of 120 rows with
 * nested values paged 50 at a time, deleting a dataset version through its dialog, an alias added to an artifact
 * version and moved to another (both versions' pages follow), a file downloaded through the console, a version linked
 * into a registry and read there, and a viewer who sees no change forms. Writes each screen's page weight to
 * target/console-it/data-weights.txt.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ConsoleDataIT {

    private static final String ADMIN_KEY = ConsoleApp.ADMIN_KEY;
    private static final ConsoleApp console = ConsoleApp.SHARED;
    private static final String TEAM = "data-lab";
    private static final String PROJECT = "eval";
    private static final String BASE = "/console/projects/" + TEAM + "/" + PROJECT;
    private static final String REGISTRY = "zoo";
    private static final List<String> WEIGHTS = new ArrayList<>();

    private static ChromeDriver browser;
    private static WebDriverWait wait;
    private static String viewerKey;
    private static String firstDigest;

    @BeforeAll
    static void start() throws Exception {
        console.join();
        browser = console.browser();
        wait = console.await();

        console.api("POST", "/api/v1/users", ADMIN_KEY, Map.of("username", "val"), 201);
        viewerKey = console.api("POST", "/api/v1/users/val/api-keys", ADMIN_KEY, Map.of("name", "console"), 201)
                .get("key").asText();
        console.api("POST", "/api/v1/teams", ADMIN_KEY, Map.of("name", TEAM), 201);
        console.api("PUT", "/api/v1/teams/" + TEAM + "/members/val", ADMIN_KEY, Map.of("role", "viewer"), 200);
        console.api("POST", "/api/v1/entities/" + TEAM + "/projects", ADMIN_KEY, Map.of("name", PROJECT), 201);
        console.api("POST", "/api/v1/registries", ADMIN_KEY, Map.of("name", REGISTRY), 201);

        List<Map<String, Object>> rows = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", i);
            row.put("question", "What is " + i + " + " + i + "?");
            row.put("answer", Integer.toString(2 * i));
            row.put("meta", Map.of("source", "synthetic", "tags", List.of("math", "t" + i % 3), "difficulty",
                    Map.of("level", i % 5)));
            rows.add(row);
        }
        firstDigest = console
                .api("POST", "/v2/" + TEAM + "/" + PROJECT + "/datasets", ADMIN_KEY,
                        Map.of("name", "qa-evals", "description", "arithmetic", "rows", rows), 200)
                .get("digest").asText();
        console.api("POST", "/v2/" + TEAM + "/" + PROJECT + "/datasets", ADMIN_KEY,
                Map.of("name", "qa-evals", "rows", rows.subList(0, 5)), 200);

        upload("classifier", "weights v0", "{\"accuracy\": 0.91, \"layers\": [64, 32]}");
        upload("classifier", "weights v1", "{\"accuracy\": 0.95, \"layers\": [128, 64]}");
    }

    @AfterAll
    static void stop() throws Exception {
        Files.createDirectories(ConsoleApp.LOGS);
        Files.writeString(ConsoleApp.LOGS.resolve("data-weights.txt"), String.join("\n", WEIGHTS) + "\n");
        WEIGHTS.forEach(System.out::println);
    }

    @Test
    @Order(1)
    void theHomePageLeadsToTheProjectOverview() throws Exception {
        console.signIn(ADMIN_KEY);
        browser.findElement(By.linkText(TEAM + "/" + PROJECT)).click();
        wait.until(d -> d.getCurrentUrl().endsWith(BASE));
        assertEquals("Project " + TEAM + "/" + PROJECT, console.text("h1"));
        assertTrue(console.text("#overview-datasets").contains("qa-evals"));
        assertTrue(console.text("#overview-datasets").contains("v1"), "the latest version of each dataset");
        assertTrue(console.text("#overview-artifacts").contains("classifier"));
        assertTrue(console.text("#overview-events").contains("CREATE_ARTIFACT"), "an admin reads the events log");
        for (String part : List.of("/datasets", "/artifacts", "/runs", "/training", "/automations")) {
            assertFalse(browser.findElements(By.cssSelector("nav.tabs a[href='" + BASE + part + "']")).isEmpty(),
                    "links to " + part);
        }
        console.assertLabelled();
        weigh("project overview");
        console.screenshot("console-project");
    }

    @Test
    @Order(2)
    void browsesADatasetsRowsAcrossPages() throws Exception {
        browser.get(console.url(BASE + "/datasets"));
        assertEquals(1, browser.findElements(By.cssSelector("tr.dataset")).size(), "the latest version of each");
        console.assertLabelled();
        weigh("datasets");
        console.screenshot("console-datasets");

        browser.findElement(By.linkText("qa-evals")).click();
        wait.until(d -> d.getCurrentUrl().endsWith("/datasets/qa-evals"));
        assertEquals(2, browser.findElements(By.cssSelector("tr.version")).size());
        assertEquals(firstDigest, browser.findElement(By.id("digest-0")).getAttribute("value"));
        console.assertLabelled();
        weigh("dataset versions");

        browser.findElement(By.linkText("v0")).click();
        wait.until(d -> d.getCurrentUrl().endsWith("/versions/" + firstDigest));
        assertEquals("Rows 1 to 50 of 120; page 1 of 3.", console.text("#rows-range"));
        assertEquals(50, browser.findElements(By.cssSelector("tr.row")).size());
        // rows keep their keys in the order they were published (only the digests sort them), so the columns do too
        assertEquals(List.of("#", "id", "question", "answer", "meta"),
                browser.findElements(By.cssSelector("#rows thead th")).stream().map(WebElement::getText).toList());
        assertEquals(firstDigest, browser.findElement(By.id("version-digest")).getAttribute("value"));
        String rowsRef = browser.findElement(By.id("rows-ref")).getAttribute("value");
        assertTrue(rowsRef.startsWith("weave:///" + TEAM + "/" + PROJECT + "/table/"), rowsRef);
        String tableDigest = rowsRef.substring(rowsRef.lastIndexOf('/') + 1);
        assertEquals(
                120, console
                        .api("POST", "/table/query_stats", ADMIN_KEY,
                                Map.of("project_id", TEAM + "/" + PROJECT, "digest", tableDigest), 200)
                        .get("count").asInt());

        // a nested value in brief, its whole JSON a click away
        WebElement nested = browser.findElement(By.cssSelector("tr.row[data-index='7'] details.cell"));
        assertFalse(nested.findElement(By.tagName("pre")).isDisplayed());
        nested.findElement(By.tagName("summary")).click();
        wait.until(d -> nested.findElement(By.tagName("pre")).isDisplayed());
        assertTrue(nested.findElement(By.tagName("pre")).getText().contains("\"level\" : 2"));
        console.assertLabelled();
        weigh("dataset rows (50 rows)");
        console.screenshot("console-dataset-rows");

        browser.findElement(By.id("next-page")).click();
        wait.until(d -> console.text("#rows-range").startsWith("Rows 51 to 100 of 120"));
        assertEquals("50", browser.findElement(By.cssSelector("tr.row")).getAttribute("data-index"));
        browser.findElement(By.id("next-page")).click();
        wait.until(d -> console.text("#rows-range").startsWith("Rows 101 to 120 of 120"));
        assertEquals(20, browser.findElements(By.cssSelector("tr.row")).size());
        assertTrue(browser.findElements(By.id("next-page")).isEmpty(), "the last page has no next");
        browser.findElement(By.id("previous-page")).click();
        wait.until(d -> console.text("#rows-range").startsWith("Rows 51 to 100 of 120"));

        // a page past the end, and a version that does not exist: the console's 422 and the API's 404, not a 500
        String cookie = browser.manage().getCookieNamed(ConsoleSessions.COOKIE).getValue();
        HttpResponse<String> pastTheEnd = console.get(BASE + "/datasets/qa-evals/versions/" + firstDigest + "?page=9",
                cookie);
        assertEquals(422, pastTheEnd.statusCode());
        assertTrue(pastTheEnd.body().contains("No page 9: the rows fill pages 1 to 3"), pastTheEnd.body());
        assertEquals(404, console.get(BASE + "/datasets/qa-evals/versions/v7", cookie).statusCode());
    }

    @Test
    @Order(3)
    void anAliasMovesFromOneVersionToAnotherOnBothPages() throws Exception {
        browser.get(console.url(BASE + "/artifacts"));
        assertTrue(console.text("section.artifact-type[data-type='model']").contains("classifier"));
        console.assertLabelled();
        weigh("artifact collections");
        console.screenshot("console-artifacts");

        browser.findElement(By.linkText("classifier")).click();
        wait.until(d -> d.getCurrentUrl().endsWith("/artifacts/classifier"));
        assertEquals(2, browser.findElements(By.cssSelector("tr.artifact-version")).size());
        assertEquals("wandb-artifact:///" + TEAM + "/" + PROJECT + "/classifier:v0",
                browser.findElement(By.id("ref-v0")).getAttribute("value"));
        console.assertLabelled();
        weigh("artifact versions");

        String v0 = BASE + "/artifacts/classifier/versions/v0";
        String v1 = BASE + "/artifacts/classifier/versions/v1";
        browser.get(console.url(v0));
        addLabel("alias", "candidate");
        wait.until(d -> aliases().contains("candidate"));
        assertEquals(List.of("candidate"), aliases());

        browser.get(console.url(v1));
        assertEquals(List.of("latest"), aliases());
        addLabel("alias", "candidate");
        wait.until(d -> aliases().contains("candidate"));
        assertEquals(List.of("candidate", "latest"), aliases().stream().sorted().toList());
        browser.get(console.url(v0));
        assertEquals(List.of(), aliases(), "the alias moved away from v0");
        browser.get(console.url(BASE + "/artifacts/classifier"));
        assertTrue(console.text("tr.artifact-version[data-version='v1'] .aliases").contains("candidate"));
        assertFalse(console.text("tr.artifact-version[data-version='v0'] .aliases").contains("candidate"));

        // a name the API refuses: its 422 on the page, next to the field
        Object refused = ((JavascriptExecutor) browser).executeAsyncScript("""
                const done = arguments[arguments.length - 1];
                fetch(arguments[1], {method: 'POST', body: new URLSearchParams(
                    {_csrf: arguments[0], alias: 'bad name'})}).then(r => r.text().then(t => done(r.status + ' '
                    + new DOMParser().parseFromString(t, 'text/html').getElementById('alias-error').textContent)),
                    e => done('failed ' + e));
                """, browser.findElement(By.name("_csrf")).getAttribute("value"), v1 + "/aliases");
        assertTrue(String.valueOf(refused).matches("422 \\S.*"), String.valueOf(refused));

        // tags: added and removed
        browser.get(console.url(v1));
        addLabel("tag", "reviewed");
        wait.until(d -> console.text("#tags").contains("reviewed"));
        browser.findElement(By.xpath("//button[text()='Remove tag reviewed']")).click();
        wait.until(d -> !console.text("#tags").contains("reviewed"));

        // the metadata, and a file through the console's session (the API's download needs a key)
        assertTrue(console.text("#metadata").contains("0.95"));
        String href = browser.findElement(By.cssSelector("tr.file a")).getAttribute("href");
        Object downloaded = ((JavascriptExecutor) browser).executeAsyncScript("""
                const done = arguments[arguments.length - 1];
                fetch(arguments[0]).then(r => r.text().then(t => done(r.status + ' ' + t
                    + ' ' + r.headers.get('content-disposition'))), e => done('failed ' + e));
                """, href);
        assertEquals("200 weights v1 attachment; filename=\"model.txt\"", downloaded);
        assertEquals("wandb-artifact:///" + TEAM + "/" + PROJECT + "/classifier:v1",
                browser.findElement(By.id("reference")).getAttribute("value"));
        console.assertLabelled();
        weigh("artifact version");
        console.screenshot("console-artifact-version");

        // linked into a registry: the registry's screens show it, with its own aliases
        browser.findElement(By.id("link-collection")).clear();
        browser.findElement(By.id("link-collection")).sendKeys("classifiers");
        browser.findElement(By.cssSelector("#link button[type=submit]")).click();
        wait.until(d -> d.getCurrentUrl().endsWith("/console/registries/" + REGISTRY + "/artifacts/classifiers"));
        assertEquals("wandb-artifact:///" + TEAM + "/" + PROJECT + "/classifier:v1",
                browser.findElement(By.id("ref-v0")).getAttribute("value"));
        browser.get(console.url("/console/registries/" + REGISTRY + "/artifacts"));
        assertTrue(console.text("section.artifact-type[data-type='model']").contains("classifiers"));
        console.assertLabelled();
        browser.get(console.url("/console/registries/" + REGISTRY + "/artifacts/classifiers/versions/v0"));
        addLabel("alias", "production");
        wait.until(d -> aliases().contains("production"));
        assertEquals(console.url(v1), browser.findElement(By.id("source")).getAttribute("href"));
        console.assertLabelled();
        weigh("registry artifact version");
    }

    @Test
    @Order(4)
    void deletesADatasetVersionThroughItsDialog() throws Exception {
        browser.get(console.url(BASE + "/datasets/qa-evals"));
        WebElement delete = browser.findElement(By.xpath("//button[text()='Delete v1']"));
        delete.click();
        WebElement dialog = browser.findElement(By.id("delete-1"));
        wait.until(d -> dialog.getAttribute("open") != null);
        dialog.findElement(By.cssSelector("[data-close]")).click();
        wait.until(d -> dialog.getAttribute("open") == null);
        assertEquals(2, browser.findElements(By.cssSelector("tr.version")).size(), "cancel leaves it");

        delete.click();
        wait.until(d -> dialog.getAttribute("open") != null);
        dialog.findElement(By.cssSelector("button[type=submit]")).click();
        wait.until(d -> d.findElements(By.cssSelector("tr.version")).size() == 1);
        assertEquals("0", browser.findElement(By.cssSelector("tr.version")).getAttribute("data-index"));
        console.api("GET", "/v2/" + TEAM + "/" + PROJECT + "/datasets/qa-evals/versions/v1", ADMIN_KEY, null, 404);
    }

    @Test
    @Order(5)
    void aViewerReadsWithoutChangeForms() throws Exception {
        console.signOut();
        console.signIn(viewerKey);
        browser.get(console.url(BASE));
        assertTrue(console.text("#events-refused").contains("admins"), "the events log is the admins' read");
        assertTrue(console.text("#overview-datasets").contains("qa-evals"));
        browser.get(console.url(BASE + "/datasets/qa-evals"));
        assertTrue(browser.findElements(By.cssSelector("button.delete, dialog")).isEmpty());
        browser.get(console.url(BASE + "/datasets/qa-evals/versions/" + firstDigest));
        assertEquals(50, browser.findElements(By.cssSelector("tr.row")).size());
        String v1 = BASE + "/artifacts/classifier/versions/v1";
        browser.get(console.url(v1));
        assertTrue(browser.findElements(By.cssSelector("#main form")).isEmpty(), "no change forms for a viewer");
        assertTrue(aliases().contains("candidate"));
        console.assertLabelled();

        // forced: the viewer's session posts the form anyway; the API behind the console refuses
        String csrf = browser.findElement(By.name("_csrf")).getAttribute("value");
        Object status = ((JavascriptExecutor) browser).executeAsyncScript("""
                const done = arguments[arguments.length - 1];
                fetch(arguments[1], {method: 'POST', body: new URLSearchParams(
                    {_csrf: arguments[0], alias: 'forced'})}).then(r => done(r.status), e => done(-1));
                """, csrf, v1 + "/aliases");
        assertEquals(403L, status);
        console.api("GET",
                "/api/v1/entities/" + TEAM + "/projects/" + PROJECT + "/artifacts/collections/classifier/versions/v1",
                ADMIN_KEY, null, 200);
        browser.get(console.url(v1));
        assertFalse(aliases().contains("forced"));
    }

    private static List<String> aliases() {
        return browser.findElements(By.cssSelector("#aliases li.alias")).stream()
                .map(li -> li.getAttribute("data-alias")).toList();
    }

    private static void addLabel(String field, String value) {
        browser.findElement(By.id(field)).sendKeys(value);
        browser.findElement(By.cssSelector("#add-" + field + " button[type=submit]")).click();
    }

    /**
     * The page's weight as the Performance API reports it: the document's HTML and every script and style it loaded,
     * uncompressed (decoded) and as transferred.
     */
    private static void weigh(String screen) {
        @SuppressWarnings("unchecked")
        Map<String, Object> weight = (Map<String, Object>) ((JavascriptExecutor) browser).executeScript("""
                const n = performance.getEntriesByType('navigation')[0];
                const r = performance.getEntriesByType('resource')
                    .filter(e => e.initiatorType === 'script' || e.initiatorType === 'link');
                return {html: n.decodedBodySize, htmlTransferred: n.transferSize,
                    assets: r.reduce((s, e) => s + e.decodedBodySize, 0), assetCount: r.length,
                    names: r.map(e => e.name.replace(location.origin, '')).join(' ')};
                """);
        long html = ((Number) weight.get("html")).longValue();
        long assets = ((Number) weight.get("assets")).longValue();
        WEIGHTS.add(String.format("%-28s %8d B  (HTML %d B, %d B transferred; scripts and styles %d B: %s)", screen,
                html + assets, html, ((Number) weight.get("htmlTransferred")).longValue(), assets,
                weight.get("names")));
    }

    private static void upload(String collection, String content, String metadata) throws Exception {
        String boundary = "----console-data-it";
        String body = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"type\"\r\n\r\nmodel\r\n--"
                + boundary + "\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n" + metadata + "\r\n--"
                + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"model.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\n" + content + "\r\n--" + boundary + "--\r\n";
        HttpResponse<String> response = console.http.send(HttpRequest
                .newBuilder(console.uri("/api/v1/entities/" + TEAM + "/projects/" + PROJECT + "/artifacts/collections/"
                        + collection + "/versions"))
                .header("Authorization", "Bearer " + ADMIN_KEY)
                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(201, response.statusCode(), response.body());
    }
}
