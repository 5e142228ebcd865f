package dev.fulcrum.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.NoAlertPresentException;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriverException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import dev.fulcrum.accounts.ConsoleSessions;
import dev.fulcrum.support.PackagedJar;

/**
 * The packaged application and a real browser (Debian's Chromium through its chromedriver) for the console's browser
 * tests: starts {@code target/quarkus-app/quarkus-run.jar} ({@link PackagedJar}) on a free port with its own data
 * directory and a bootstrap admin key, waits until it is ready, and offers the API (with a Bearer key) and the browser
 * side by side. One application and browser serve every browser test class of the run ({@link #SHARED}, one start
 * instead of one per class); each class makes a world of its own names through the API and starts signed out.
 * Screenshots go to target/console-screenshots, or to docs/images with {@code -Dconsole.screenshots=docs/images}.
 */
final class ConsoleApp {

    /** The run's application and browser, started by the first class that {@linkplain #join() joins}. */
    static final ConsoleApp SHARED = new ConsoleApp("console");

    static final Path LOGS = Path.of("target", "console-it");

    static final String ADMIN_KEY = "fk_console-it-admin-key-0123456789";
    static final Path IMAGES = Path.of(System.getProperty("console.screenshots", "target/console-screenshots"));
    /** Where the application finds its Hugging Face Hub: a free port, where ConsoleIT starts a fake one. */
    static final int HUB_PORT = freePort();
    /** Where the application finds Slack's Web API: a free port, where ConsoleIT starts a fake Slack. */
    static final int SLACK_PORT = freePort();

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    final ObjectMapper json = new ObjectMapper();

    private final String name;
    private Path dataDir;
    private int port;
    private Process app;
    private ChromeDriver browser;
    private WebDriverWait wait;

    /**
     * @param name
     *            names the log file under target/console-it
     */
    ConsoleApp(String name) {
        this.name = name;
    }

    /**
     * Installs Debian's Chromium and its driver when they are missing (scripts/install-chromium.sh), once for all the
     * browser tests of a run, so that the README's test command needs nothing installed first.
     */
    private static synchronized void installBrowser() throws Exception {
        if (Files.isExecutable(Path.of("/usr/bin/chromedriver")) && Files.isExecutable(Path.of("/usr/bin/chromium"))) {
            return;
        }
        Path log = LOGS.resolve("install-chromium.log");
        Files.createDirectories(LOGS);
        Process install = new ProcessBuilder("bash", "scripts/install-chromium.sh").redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        assertTrue(install.waitFor(15, java.util.concurrent.TimeUnit.MINUTES) && install.exitValue() == 0,
                "scripts/install-chromium.sh installs Debian's chromium and chromium-driver; see " + log);
        assertTrue(Files.isExecutable(Path.of("/usr/bin/chromedriver")), "chromedriver is installed; see " + log);
    }

    /**
     * The application and browser, started on the first call (and stopped when the test JVM ends), signed out on a
     * blank page: no cookie, nothing stored or cached by an earlier class's pages.
     */
    synchronized ConsoleApp join() throws Exception {
        if (app == null) {
            try {
                // ConsoleIT's webhook receiver runs on loopback over http
                start(Map.of("FULCRUM_WEBHOOKS_ALLOW_HTTP", "true", "FULCRUM_WEBHOOKS_ALLOWED_NETWORKS",
                        "127.0.0.0/8"));
            } catch (Exception | AssertionError e) {
                try {
                    stop(); // what did start: the next class tries again from nothing
                } catch (IOException | RuntimeException cleanUp) {
                    e.addSuppressed(cleanUp);
                }
                app = null;
                throw e;
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    stop();
                } catch (IOException e) {
                    System.err.println("the console tests' application did not stop cleanly: " + e);
                }
            }));
        }
        assertTrue(app.isAlive(), "the console tests' application exited:\n" + lastLog());
        browser.get(url("/console/sign-in"));
        script("window.localStorage.clear(); window.sessionStorage.clear();");
        browser.manage().deleteAllCookies();
        // the page weights each class reports are those of a first visit
        browser.executeCdpCommand("Network.clearBrowserCache", Map.of());
        browser.get("about:blank");
        return this;
    }

    /** Starts the application with {@code env} added to its environment, then the browser. */
    private void start(Map<String, String> env) throws Exception {
        assertTrue(Files.isRegularFile(PackagedJar.JAR), PackagedJar.JAR + " is built by the package phase");
        installBrowser();
        dataDir = Files.createTempDirectory("fulcrum-" + name);
        Files.createDirectories(LOGS);
        Files.createDirectories(IMAGES);
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        ProcessBuilder builder = new ProcessBuilder(PackagedJar.command("-Xmx384m")).redirectErrorStream(true)
                .redirectOutput(log().toFile());
        Map<String, String> environment = builder.environment();
        environment.keySet().removeIf(key -> key.startsWith("QUARKUS_") || key.startsWith("FULCRUM_"));
        environment.put("FULCRUM_DATA_DIR", dataDir.toString());
        environment.put("QUARKUS_HTTP_PORT", Integer.toString(port));
        environment.put("QUARKUS_HTTP_HOST", "127.0.0.1");
        environment.put("FULCRUM_BOOTSTRAP_API_KEY", ADMIN_KEY);
        environment.put("FULCRUM_INFERENCE_HUB_ENDPOINT", "http://127.0.0.1:" + HUB_PORT);
        environment.put("FULCRUM_WEBHOOKS_SLACK_API_URL", "http://127.0.0.1:" + SLACK_PORT + "/api");
        environment.remove("HF_TOKEN");
        environment.putAll(env);
        app = builder.start();
        awaitReady();

        ChromeOptions options = new ChromeOptions();
        options.setBinary("/usr/bin/chromium");
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1280,1000",
                "--user-data-dir=" + Files.createTempDirectory(name + "-chromium"));
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(new File("/usr/bin/chromedriver")).usingAnyFreePort().build();
        browser = new ChromeDriver(service, options);
        wait = new WebDriverWait(browser, Duration.ofSeconds(20));
        // a condition that reads the page while a form's redirect replaces it is asked again, not failed
        wait.ignoring(StaleElementReferenceException.class, WebDriverException.class);
    }

    private void stop() throws IOException {
        if (browser != null) {
            browser.quit();
            browser = null;
        }
        if (app != null && app.isAlive()) {
            app.destroy();
            try {
                if (!app.waitFor(30, TimeUnit.SECONDS)) {
                    app.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (dataDir != null) {
            postmaster().ifPresent(pid -> ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                    .filter(p -> p.info().command().map(c -> c.contains("postgres")).orElse(false))
                    .ifPresent(ProcessHandle::destroyForcibly));
            try (Stream<Path> paths = Files.walk(dataDir)) {
                paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            }
        }
    }

    ChromeDriver browser() {
        return browser;
    }

    WebDriverWait await() {
        return wait;
    }

    Path dataDir() {
        return dataDir;
    }

    void signIn(String key) {
        browser.get(url("/console/sign-in"));
        browser.findElement(By.id("api_key")).sendKeys(key);
        browser.findElement(By.cssSelector("main button[type=submit]")).click();
        wait.until(d -> d.getCurrentUrl().endsWith("/console/"));
    }

    void signOut() {
        browser.findElement(By.id("sign-out")).click();
        wait.until(d -> d.getCurrentUrl().endsWith("/console/sign-in"));
    }

    /** The text of the first element matching {@code css}, or "" when there is none. */
    String text(String css) {
        List<WebElement> found = browser.findElements(By.cssSelector(css));
        return found.isEmpty() ? "" : found.get(0).getText();
    }

    Object script(String script, Object... arguments) {
        return ((JavascriptExecutor) browser).executeScript(script, arguments);
    }

    /** Every visible form control of the page has a label (for=id, wrapping, or aria-label). */
    void assertLabelled() {
        Object unlabelled = script("""
                return Array.from(document.querySelectorAll('input, select, textarea'))
                  .filter(el => el.type !== 'hidden')
                  .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label'))
                  .map(el => el.outerHTML);
                """);
        assertEquals(List.of(), unlabelled, "form controls without a label on " + browser.getCurrentUrl());
    }

    void assertNoAlert() {
        try {
            browser.switchTo().alert();
            fail("a script ran: an alert is open");
        } catch (NoAlertPresentException expected) {
            // nothing ran
        }
    }

    void screenshot(String image) throws IOException {
        File shot = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE);
        Files.copy(shot.toPath(), IMAGES.resolve(image + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }

    /** Calls the API with a Bearer key and a JSON body (or none), expecting {@code expected}; the answer's JSON. */
    JsonNode api(String method, String path, String key, Object body, int expected) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + key);
        if (body != null) {
            request.header("Content-Type", "application/json").method(method,
                    HttpRequest.BodyPublishers.ofString(json.writeValueAsString(body)));
        } else {
            request.method(method, HttpRequest.BodyPublishers.noBody());
        }
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(expected, response.statusCode(), method + " " + path + ": " + response.body());
        return response.body().isEmpty() ? json.nullNode() : json.readTree(response.body());
    }

    /** A GET with the console's session cookie, or none. */
    HttpResponse<String> get(String path, String cookie) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).GET();
        if (cookie != null) {
            request.header("Cookie", ConsoleSessions.COOKIE + "=" + cookie);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    String url(String path) {
        return "http://127.0.0.1:" + port + path;
    }

    URI uri(String path) {
        return URI.create(url(path));
    }

    String lastLog() throws IOException {
        List<String> lines = Files.readAllLines(log());
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    private Path log() {
        return LOGS.resolve(name + ".log");
    }

    private void awaitReady() throws Exception {
        try {
            Awaitility.await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250)).until(() -> {
                if (!app.isAlive()) {
                    fail("Fulcrum exited with " + app.exitValue() + ":\n" + lastLog());
                }
                try {
                    return get("/q/health/ready", null).statusCode() == 200;
                } catch (IOException notYet) {
                    return false; // not listening yet
                }
            });
        } catch (ConditionTimeoutException e) {
            fail("Fulcrum was not ready in time:\n" + lastLog());
        }
    }

    private Optional<Long> postmaster() throws IOException {
        Path pid = dataDir.resolve("postgres").resolve("postmaster.pid");
        List<String> lines = Files.exists(pid) ? Files.readAllLines(pid) : Collections.emptyList();
        return lines.isEmpty() ? Optional.empty() : Optional.of(Long.parseLong(lines.get(0).trim()));
    }
}
