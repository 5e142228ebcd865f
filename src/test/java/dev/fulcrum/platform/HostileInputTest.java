package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import com.atlassian.oai.validator.OpenApiInteractionValidator;
import com.atlassian.oai.validator.model.Request;
import com.atlassian.oai.validator.model.SimpleResponse;
import com.atlassian.oai.validator.report.ValidationReport;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;

import io.agroal.api.AgroalDataSource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.specification.RequestSpecification;
import io.swagger.v3.oas.models.media.Schema;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.ContractOperations;
import dev.fulcrum.support.ContractOperations.ErrorShape;
import dev.fulcrum.support.ContractOperations.Operation;
import dev.fulcrum.support.ContractOperations.Param;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.HostileValues;
import dev.fulcrum.support.HostileValues.Bad;
import dev.fulcrum.support.SeededWorld;

/**
 * Every operation of every openapi/*.yaml gets bad values for each of its parameters and body fields (wrong types, NUL
 * characters and unpaired surrogates, null items in lists, huge strings, deep nesting, out-of-range numbers, invalid
 * UTF-8, truncated bodies, wrong content types) from the server administrator, in a small world where all the other
 * parameters name things that exist. No answer may be a server error; every error is in its interface's shape; every
 * answer is one the operation documents, and valid against it. The operations are read from the documents, so a new
 * endpoint is covered without a test of its own.
 */
@QuarkusTest
class HostileInputTest {

    /** What a failing answer was: where the bad value went, which one it was, and what came back. */
    record Failure(Operation op, String target, String mutation, int status, String problem, String excerpt) {
        @Override
        public String toString() {
            return op.id() + " | " + target + " | " + mutation + " | " + status + " | " + problem + " | " + excerpt;
        }
    }

    private static final Pattern PARAM = Pattern.compile("\\{([^}]+)}");
    private static final String RAW = "@@HOSTILE-RAW@@";
    private static final String BOUNDARY = "hostile-boundary-7f3a";
    private static final String ADMIN = EmbeddedPostgresResource.ADMIN_KEY;

    @TestHTTPResource("/")
    URI base;

    private final ObjectMapper json = new ObjectMapper();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();
    private final Map<String, OpenApiInteractionValidator> validators = new HashMap<>();
    private final List<Failure> failures = new ArrayList<>();
    /** Values of parameters and body fields that name things of the world, by name. */
    private final Map<String, String> world = new HashMap<>();
    private final Map<String, JsonNode> fields = new HashMap<>();
    private int requests;
    private int sequence;
    private final Map<Integer, Integer> statuses = new TreeMap<>();
    private final Map<Integer, Integer> consoleStatuses = new TreeMap<>();
    /** Console refusals answered as problem details rather than on a page (reported, not yet failed). */
    private final List<String> offPage = new ArrayList<>();

    @Inject
    AgroalDataSource database;

    @Test
    void noOperationAnswersHostileInputWithAServerErrorOrOutsideItsContract() throws Exception {
        long started = System.nanoTime();
        OffsetDateTime began = OffsetDateTime.now().minusSeconds(5);
        makeWorld();
        List<Operation> operations = ContractOperations.all();
        int baselinesOk = 0;
        for (Operation op : inSafeOrder(operations)) {
            baselinesOk += probe(op) ? 1 : 0;
        }
        int apiRequests = requests;
        List<ConsoleRoute> pages = ConsoleRoute.all();
        int pagesOk = walkConsole(pages);
        int consoleRequests = requests - apiRequests;
        retireWorkers(began);
        double seconds = (System.nanoTime() - started) / 1e9;

        StringBuilder report = new StringBuilder();
        report.append(String.format("Hostile input: %d requests to %d operations of %d documents in %.1f s%n", requests,
                operations.size(), operations.stream().map(Operation::document).distinct().count(), seconds));
        report.append("Baselines answered 2xx: ").append(baselinesOk).append('\n');
        report.append(String.format(
                "Console: %d requests to %d pages (%d query parameters, %d path parameters); baselines answered 2xx: %d%n",
                consoleRequests, pages.size(), pages.stream().mapToInt(r -> r.query().size()).sum(),
                pages.stream().mapToInt(r -> r.pathParams().size()).sum(), pagesOk));
        report.append(String.format("API: %d requests; all checks: %d%n", apiRequests, requests));
        report.append("Statuses: ").append(statuses).append('\n');
        report.append("Console statuses: ").append(consoleStatuses).append('\n');
        report.append("Console refusals not shown as a page: ").append(offPage.size()).append('\n');
        report.append("Failures (operation | target | mutation | status | problem | body):\n");
        distinct(failures).forEach(line -> report.append("  ").append(line).append('\n'));
        System.out.println(report);
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target", "hostile-input-report.txt"), report);

        assertTrue(operations.size() >= 100, "the documents' operations are read: " + operations.size());
        assertTrue(apiRequests >= 20 * operations.size(), "each operation gets many bad requests: " + apiRequests);
        assertTrue(pages.size() >= 30, "the console's pages are read from its classes: " + pages.size());
        assertTrue(consoleRequests >= 10 * pages.size(), "each page gets many bad requests: " + consoleRequests);
        assertEquals(List.of(), distinct(failures));
    }

    /**
     * The workers this test registered (the world's, and those the probes of the registration made) claimed work; they
     * must not make the GPU queue look served to the tests that run after this one, so their last claim is moved out of
     * the liveness window.
     */
    private void retireWorkers(OffsetDateTime since) throws SQLException {
        try (Connection c = database.getConnection();
                PreparedStatement retire = c.prepareStatement(
                        "update training_workers set last_seen = now() - interval '1 day' where kind = 'gpu' and created_at >= ?")) {
            retire.setObject(1, since);
            retire.executeUpdate();
        }
    }

    /** One line per operation, target kind, mutation, status and problem, with how often it happened. */
    private static List<String> distinct(List<Failure> all) {
        Map<String, Integer> lines = new LinkedHashMap<>();
        for (Failure f : all) {
            String target = f.target().replaceAll("\\[\\d+]", "[]");
            lines.merge(f.op().id() + " | " + target + " | " + f.mutation() + " | " + f.status() + " | " + f.problem()
                    + " | " + f.excerpt(), 1, Integer::sum);
        }
        return lines.entrySet().stream().map(e -> e.getKey() + (e.getValue() > 1 ? " (x" + e.getValue() + ")" : ""))
                .toList();
    }

    /** Deletions last, the deepest paths first, so that no deletion takes away what a later request names. */
    private static List<Operation> inSafeOrder(List<Operation> operations) {
        List<Operation> ordered = new ArrayList<>(
                operations.stream().filter(op -> !op.method().equals("DELETE")).toList());
        ordered.addAll(operations.stream().filter(op -> op.method().equals("DELETE"))
                .sorted(Comparator.comparingInt((Operation op) -> op.path().split("/").length).reversed()).toList());
        return ordered;
    }

    // ---- the world: one of everything a path can name, made as the server administrator ----

    private void makeWorld() {
        world.putAll(SeededWorld.make("hostile"));
        String team = world.get("team");
        String project = world.get("project");
        String registry = world.get("registry");
        String collection = world.get("collection");
        String version = world.get("version");
        String trainingModel = world.get("model_id");
        String tableDigest = world.get("table_digest");
        long webhook = Long.parseLong(world.get("webhookId"));
        world.putAll(Map.of("deliveryId", "1", "wait", "0", "path", "model.txt", "confirm", "hostile-automation", "ref",
                team + "/" + project + "/" + collection + ":" + version));

        JsonNodeFactory nodes = JsonNodeFactory.instance;
        fields.put("entity", nodes.textNode(team));
        fields.put("team", nodes.textNode(team));
        fields.put("project", nodes.textNode(project));
        fields.put("registry", nodes.textNode(registry));
        fields.put("collection", nodes.textNode(collection));
        fields.put("webhook_id", nodes.numberNode(webhook));
        fields.put("model_id", nodes.textNode(trainingModel));
        fields.put("base_model", nodes.textNode(SeededWorld.BASE_MODEL));
        fields.put("model", nodes.textNode("fulcrum-tiny"));
        fields.put("max_tokens", nodes.numberNode(2));
        fields.put("project_id", nodes.textNode(team + "/" + project));
        fields.put("digest", nodes.textNode(tableDigest));
        fields.put("url", nodes.textNode(SeededWorld.WEBHOOK_URL));
        fields.put("base_url", nodes.textNode(SeededWorld.MODEL_URL));
        fields.put("messages", json.valueToTree(List.of(Map.of("role", "user", "content", "hi"))));
        fields.put("rows", json.valueToTree(List.of(Map.of("q", "a"))));
        fields.put("trajectory_groups", json.valueToTree(
                List.of(Map.of("trajectories", List.of(SeededWorld.trajectory(1), SeededWorld.trajectory(0))))));
        fields.put("base_models", json.valueToTree(List.of("example/uncatalogued-base")));
        fields.put("training_data_url",
                nodes.textNode("wandb-artifact:///" + team + "/" + project + "/" + collection + ":" + version));
        fields.put("steps", json.valueToTree(List.of(1)));
    }

    private static RequestSpecification admin(io.restassured.filter.Filter contract) {
        return given().filter(contract).auth().oauth2(ADMIN).contentType(ContentType.JSON);
    }

    private String unique(String prefix) {
        return prefix + (++sequence) + Long.toString(System.nanoTime() % 100_000);
    }

    // ---- one operation: a baseline request, then one bad value at a time ----

    /** Sends the operation its bad requests; answers whether its baseline request succeeded. */
    private boolean probe(Operation op) throws IOException, InterruptedException {
        Call baseline = baseline(op);
        boolean ok = false;
        if (!op.method().equals("DELETE")) {
            ok = send(op, "baseline", "none", baseline) / 100 == 2;
        }
        for (Param p : op.params("path")) {
            for (Bad bad : HostileValues.uri(ContractOperations.type(p.schema()))) {
                send(op, "path " + p.name(), bad.name(), baseline.withPath(path(op, p.name(), bad.raw())));
            }
        }
        for (Param p : op.params("query")) {
            for (Bad bad : HostileValues.uri(ContractOperations.type(p.schema()))) {
                Map<String, String> query = new LinkedHashMap<>(baseline.query());
                query.put(p.name(), bad.raw());
                send(op, "query " + p.name(), bad.name(), baseline.withQuery(query));
            }
        }
        for (Param p : op.params("header")) {
            for (Bad bad : HostileValues.header()) {
                Map<String, String> headers = new LinkedHashMap<>(baseline.headers());
                headers.put(p.name(), bad.raw());
                send(op, "header " + p.name(), bad.name(), baseline.withHeaders(headers));
            }
        }
        if (op.bodyType() == null) {
            return ok;
        }
        if (op.bodyType().equals("application/json")) {
            probeJsonBody(op, baseline);
        } else if (op.bodyType().startsWith("multipart/")) {
            probeMultipartBody(op, baseline);
        }
        send(op, "body", "empty", baseline.withBody(baseline.contentType(), new byte[0]));
        send(op, "body", "wrong-content-type", baseline.withBody("text/plain", baseline.body()));
        send(op, "body", "truncated",
                baseline.withBody(baseline.contentType(), Arrays.copyOf(baseline.body(), baseline.body().length / 2)));
        return ok;
    }

    private void probeJsonBody(Operation op, Call baseline) throws IOException, InterruptedException {
        JsonNode body = json.readTree(baseline.body());
        if (body.isArray() && !(body.get(0) instanceof ObjectNode)) {
            body = json.createArrayNode().add(json.createObjectNode());
        } else if (!body.isArray() && !body.isObject()) {
            body = json.createObjectNode();
        }
        ObjectNode target = (ObjectNode) (body.isArray() ? body.get(0) : body);
        String prefix = body.isArray() ? "body[0]." : "body.";
        Schema<?> schema = body.isArray() ? op.body().getItems() : op.body();
        Map<String, Schema> properties = schema == null || schema.getProperties() == null ? Map.of()
                : schema.getProperties();
        if (properties.isEmpty()) {
            properties = Map.of("hostile", new Schema<>());
        }
        for (Map.Entry<String, Schema> property : properties.entrySet()) {
            String name = property.getKey();
            Schema<?> fieldSchema = property.getValue();
            JsonNode saved = target.get(name);
            for (Bad bad : HostileValues.json(ContractOperations.type(fieldSchema))) {
                target.set(name, TextNode.valueOf(RAW));
                send(op, prefix + name, bad.name(), baseline.withBody("application/json", raw(body, bad.raw())));
            }
            // one level down: the fields of an object, or of an array's first object
            Schema<?> nested = "array".equals(ContractOperations.type(fieldSchema)) ? fieldSchema.getItems()
                    : fieldSchema;
            if (nested != null && nested.getProperties() != null
                    && ("object".equals(ContractOperations.type(nested)))) {
                boolean inArray = nested != fieldSchema;
                for (Map.Entry<String, Schema> inner : ((Map<String, Schema>) nested.getProperties()).entrySet()) {
                    ObjectNode parent = sample(inner.getKey(), nested, 1) instanceof ObjectNode o ? o
                            : json.createObjectNode();
                    parent.set(inner.getKey(), TextNode.valueOf(RAW));
                    target.set(name, inArray ? json.createArrayNode().add(parent) : parent);
                    for (Bad bad : HostileValues.json(ContractOperations.type(inner.getValue()))) {
                        send(op, prefix + name + (inArray ? "[0]." : ".") + inner.getKey(), bad.name(),
                                baseline.withBody("application/json", raw(body, bad.raw())));
                    }
                }
            }
            if (saved == null) {
                target.remove(name);
            } else {
                target.set(name, saved);
            }
        }
        byte[] valid = baseline.body();
        String text = new String(valid, StandardCharsets.UTF_8);
        send(op, "body", "invalid-utf8", baseline.withBody("application/json", invalidUtf8(text)));
        send(op, "body", "nul-byte",
                baseline.withBody("application/json", (text + "\u0000").getBytes(StandardCharsets.UTF_8)));
        send(op, "body", "deep-nesting", baseline.withBody("application/json",
                HostileValues.deepObject(HostileValues.DEEP).getBytes(StandardCharsets.UTF_8)));
        send(op, "body", "wrong-type", baseline.withBody("application/json",
                (body.isArray() ? "{\"not\":\"an array\"}" : "[\"not an object\"]").getBytes(StandardCharsets.UTF_8)));
        send(op, "body", "not-json",
                baseline.withBody("application/json", "<hostile/>".getBytes(StandardCharsets.UTF_8)));
        if (body.isArray()) {
            send(op, "body", "null-item",
                    baseline.withBody("application/json", "[null]".getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** The JSON text with a string's first characters replaced by bytes that are not UTF-8. */
    private static byte[] invalidUtf8(String text) {
        int quote = text.indexOf('"');
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        if (quote < 0) {
            out.writeBytes("{\"hostile\":\"".getBytes(StandardCharsets.UTF_8));
            out.writeBytes(new byte[] { (byte) 0xFF, (byte) 0xFE, (byte) 0xC3, (byte) 0x28 });
            out.writeBytes("\"}".getBytes(StandardCharsets.UTF_8));
            return out.toByteArray();
        }
        out.writeBytes(text.substring(0, quote + 1).getBytes(StandardCharsets.UTF_8));
        out.writeBytes(new byte[] { (byte) 0xFF, (byte) 0xFE, (byte) 0xC3, (byte) 0x28 });
        out.writeBytes(text.substring(quote + 1).getBytes(StandardCharsets.UTF_8));
        return out.toByteArray();
    }

    private byte[] raw(JsonNode body, String rawValue) throws IOException {
        return json.writeValueAsString(body).replace("\"" + RAW + "\"", rawValue).getBytes(StandardCharsets.UTF_8);
    }

    private void probeMultipartBody(Operation op, Call baseline) throws IOException, InterruptedException {
        String type = "multipart/form-data; boundary=" + BOUNDARY;
        Map<String, Schema> properties = op.body().getProperties() == null ? Map.of() : op.body().getProperties();
        for (String field : properties.keySet()) {
            if (field.equals("file")) {
                for (Bad bad : List.of(new Bad("nul-char", "a\u0000b.txt"), new Bad("dot-dot", "../../etc/passwd"),
                        new Bad("huge-string", "x".repeat(HostileValues.HUGE)), new Bad("empty", ""),
                        new Bad("absolute", "/etc/passwd"), new Bad("invalid-utf8", "\uFFFD\uFFFE"))) {
                    send(op, "body.file name", bad.name(), baseline.withBody(type, multipart(Map.of(), bad.raw())));
                }
                continue;
            }
            for (Bad bad : List.of(new Bad("nul-char", "a\u0000b"),
                    new Bad("huge-string", "x".repeat(HostileValues.HUGE)), new Bad("not-json", "{\"truncated\": "),
                    new Bad("deep-nesting", HostileValues.deepObject(HostileValues.DEEP)),
                    new Bad("wrong-type", "[1, 2]"), new Bad("1e400", "{\"n\": 1e400}"))) {
                send(op, "body." + field, bad.name(),
                        baseline.withBody(type, multipart(Map.of(field, bad.raw()), "model.txt")));
            }
            byte[] invalid = multipart(Map.of(field, "@@UTF8@@"), "model.txt");
            send(op, "body." + field, "invalid-utf8", baseline.withBody(type,
                    replace(invalid, "@@UTF8@@", new byte[] { (byte) 0xFF, (byte) 0xFE, (byte) 0xC3, (byte) 0x28 })));
        }
        byte[] valid = multipart(Map.of(), "model.txt");
        String text = new String(valid, StandardCharsets.ISO_8859_1);
        send(op, "body", "no-closing-boundary", baseline.withBody(type,
                text.substring(0, text.lastIndexOf("--" + BOUNDARY)).getBytes(StandardCharsets.ISO_8859_1)));
        send(op, "body", "no-boundary-parameter", baseline.withBody("multipart/form-data", valid));
        send(op, "body", "other-boundary", baseline.withBody("multipart/form-data; boundary=elsewhere", valid));
        send(op, "body", "garbage",
                baseline.withBody(type, "\u0000\u0001garbage\r\n\r\n--".getBytes(StandardCharsets.ISO_8859_1)));
        send(op, "body", "part-without-headers",
                baseline.withBody(type, ("--" + BOUNDARY + "\r\n\r\nno headers\r\n--" + BOUNDARY + "--\r\n")
                        .getBytes(StandardCharsets.ISO_8859_1)));
    }

    private static byte[] replace(byte[] bytes, String marker, byte[] with) {
        String text = new String(bytes, StandardCharsets.ISO_8859_1);
        int at = text.indexOf(marker);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(Arrays.copyOf(bytes, at));
        out.writeBytes(with);
        out.writeBytes(Arrays.copyOfRange(bytes, at + marker.length(), bytes.length));
        return out.toByteArray();
    }

    /** A multipart upload of one small file, with these form fields. */
    private static byte[] multipart(Map<String, String> formFields, String fileName) {
        StringBuilder text = new StringBuilder();
        Map<String, String> all = new LinkedHashMap<>(Map.of("type", "model"));
        all.putAll(formFields);
        all.forEach((name, value) -> text.append("--").append(BOUNDARY).append("\r\n")
                .append("Content-Disposition: form-data; name=\"").append(name).append("\"\r\n\r\n").append(value)
                .append("\r\n"));
        text.append("--").append(BOUNDARY).append("\r\n")
                .append("Content-Disposition: form-data; name=\"file\"; filename=\"").append(fileName)
                .append("\"\r\nContent-Type: text/plain\r\n\r\nweights\r\n").append("--").append(BOUNDARY)
                .append("--\r\n");
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    // ---- the console: every page, with world values, then one bad value at a time ----

    /** A page of the console: its path template, its path parameters and query parameters, from its class. */
    record ConsoleRoute(String path, List<String> pathParams, List<String> query) {

        static List<ConsoleRoute> all() throws IOException, ClassNotFoundException {
            List<ConsoleRoute> routes = new ArrayList<>();
            ClassLoader loader = Thread.currentThread().getContextClassLoader();
            List<String> names = new ArrayList<>();
            for (java.util.Enumeration<java.net.URL> dirs = loader.getResources("dev/fulcrum/console"); dirs
                    .hasMoreElements();) {
                java.net.URL dir = dirs.nextElement();
                if (!dir.getProtocol().equals("file")) {
                    continue;
                }
                try (var files = Files.list(Path.of(URI.create(dir.toString())))) {
                    files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".class") && !n.contains("$"))
                            .forEach(n -> names.add(n.substring(0, n.length() - ".class".length())));
                }
            }
            for (String name : names.stream().distinct().sorted().toList()) {
                Class<?> page = Class.forName("dev.fulcrum.console." + name, false, loader);
                jakarta.ws.rs.Path base = page.getAnnotation(jakarta.ws.rs.Path.class);
                if (base == null) {
                    continue;
                }
                for (java.lang.reflect.Method m : page.getDeclaredMethods()) {
                    if (!m.isAnnotationPresent(jakarta.ws.rs.GET.class)) {
                        continue;
                    }
                    jakarta.ws.rs.Path sub = m.getAnnotation(jakarta.ws.rs.Path.class);
                    String path = (base.value() + (sub == null ? "" : "/" + sub.value())).replaceAll("/+", "/");
                    List<String> pathParams = new ArrayList<>();
                    List<String> query = new ArrayList<>();
                    for (java.lang.reflect.Parameter p : m.getParameters()) {
                        var q = p.getAnnotation(org.jboss.resteasy.reactive.RestQuery.class);
                        if (q != null) {
                            query.add(q.value().isEmpty() ? p.getName() : q.value());
                        }
                        var r = p.getAnnotation(org.jboss.resteasy.reactive.RestPath.class);
                        if (r != null) {
                            pathParams.add(r.value().isEmpty() ? p.getName() : r.value());
                        }
                    }
                    routes.add(new ConsoleRoute(path, pathParams, query));
                }
            }
            return routes;
        }
    }

    /** Walks every page; answers how many baselines answered 2xx (or a redirect). */
    private int walkConsole(List<ConsoleRoute> pages) throws IOException, InterruptedException {
        String cookie = given().contentType(ContentType.URLENC).formParam("api_key", ADMIN).redirects().follow(false)
                .post("/console/sign-in").then().statusCode(303).extract()
                .cookie(dev.fulcrum.accounts.ConsoleSessions.COOKIE);
        int ok = 0;
        for (ConsoleRoute page : pages) {
            Map<String, String> query = new LinkedHashMap<>();
            for (String name : page.query()) {
                String value = consoleWorld(page, name);
                if (value != null) {
                    query.put(name, encode(value));
                }
            }
            String path = consolePath(page, null, null);
            int status = sendPage(page, cookie, "baseline", "none", path, query);
            ok += status / 100 == 2 || status / 100 == 3 ? 1 : 0;
            for (String name : page.query()) {
                for (Bad bad : HostileValues.console()) {
                    Map<String, String> mutated = new LinkedHashMap<>(query);
                    mutated.put(name, bad.raw());
                    sendPage(page, cookie, "query " + name, bad.name(), path, mutated);
                }
            }
            for (String name : page.pathParams()) {
                for (Bad bad : HostileValues.uri("string")) {
                    sendPage(page, cookie, "path " + name, bad.name(), consolePath(page, name, bad.raw()), query);
                }
            }
        }
        return ok;
    }

    /** The world's value of a console page's parameter (the console names some things differently from the API). */
    private String consoleWorld(ConsoleRoute page, String name) {
        String path = page.path();
        return switch (name) {
            case "run" -> "hostile-run";
            case "dataset" -> world.get("object_id");
            case "version" -> path.contains("/datasets/") ? world.get("digest") : world.get("version");
            case "model" -> path.contains("/training/") ? world.get("model_id") : world.get("model");
            case "job" -> world.get("training_job_id");
            case "id" -> path.contains("/webhooks/") ? world.get("webhookId")
                    : path.contains("/slack-integrations/") ? world.get("integrationId")
                            : path.startsWith("/console/registries/") ? world.get("registry automation")
                                    : world.get("automation");
            case "path" -> "model.txt";
            case "keys", "metrics" -> "loss";
            case "offset", "page" -> "0";
            case "project" -> path.startsWith("/console/projects/") ? world.get("project")
                    : world.get("entity") + "/" + world.get("project");
            case "from", "to", "name", "creator", "state", "after", "event", "before", "created_since", "op", "status",
                    "all" -> null;
            default -> world.get(name);
        };
    }

    private String consolePath(ConsoleRoute page, String mutated, String raw) {
        Matcher m = PARAM.matcher(page.path());
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String name = m.group(1);
            String value = name.equals(mutated) ? raw : encode(String.valueOf(consoleWorld(page, name)));
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }

    /**
     * Sends a page request with the session; no answer may be a server error, and a page's refusal of a query value is
     * shown on a page (HTML), or in the JSON of the routes a page's script reads.
     */
    private int sendPage(ConsoleRoute page, String cookie, String target, String mutation, String path,
            Map<String, String> query) throws IOException, InterruptedException {
        StringBuilder uri = new StringBuilder(base.toString().replaceAll("/$", "")).append(path);
        if (!query.isEmpty()) {
            uri.append('?');
            query.forEach((name, value) -> uri.append(name).append('=').append(value).append('&'));
            uri.setLength(uri.length() - 1);
        }
        HttpRequest request = HttpRequest.newBuilder(URI.create(uri.toString())).timeout(Duration.ofSeconds(60))
                .header("Cookie", dev.fulcrum.accounts.ConsoleSessions.COOKIE + "=" + cookie).GET().build();
        requests++;
        HttpResponse<byte[]> response;
        try {
            response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException closed) {
            try {
                response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
            } catch (IOException e) {
                failures.add(new Failure(console(page), target, mutation, 0, "no answer: " + e, ""));
                return 0;
            }
        }
        int status = response.statusCode();
        consoleStatuses.merge(status, 1, Integer::sum);
        String type = response.headers().firstValue("Content-Type").orElse("");
        String body = new String(response.body(), StandardCharsets.UTF_8);
        String excerpt = (body.length() > 160 ? body.substring(0, 160) + "..." : body).replace('\n', ' ');
        String problem = null;
        if (status >= 500) {
            problem = "server error";
        } else if (status >= 400 && target.startsWith("query ") && status != 414) {
            boolean json = page.path().endsWith(".json");
            if (json ? !type.startsWith("application/json") : !type.startsWith("text/html")) {
                // a refusal of the console is a page (or the JSON of a page's script), never the API's shape
                offPage.add(page.path() + " | " + target + " | " + mutation + " | " + status);
                problem = "refused as " + type + ", not as the console's " + (json ? "JSON" : "page");
            }
        }
        if (problem != null) {
            failures.add(new Failure(console(page), target, mutation, status, problem, excerpt));
        }
        return status;
    }

    private static Operation console(ConsoleRoute page) {
        return new Operation("console", "GET", page.path(), "GET " + page.path(), List.of(), null, null, null,
                java.util.Set.of(), null);
    }

    // ---- requests that would succeed: every other value names something of the world ----

    record Call(String method, String path, Map<String, String> query, Map<String, String> headers, String contentType,
            byte[] body, String validPath) {

        Call withPath(String p) {
            return new Call(method, p, query, headers, contentType, body, validPath);
        }

        Call withQuery(Map<String, String> q) {
            return new Call(method, path, q, headers, contentType, body, validPath);
        }

        Call withHeaders(Map<String, String> h) {
            return new Call(method, path, query, h, contentType, body, validPath);
        }

        Call withBody(String type, byte[] b) {
            return new Call(method, path, query, headers, type, b, validPath);
        }
    }

    private Call baseline(Operation op) throws IOException {
        String path = path(op, null, null);
        Map<String, String> query = new LinkedHashMap<>();
        for (Param p : op.params("query")) {
            String value = world.get(p.name());
            if (value != null) {
                query.put(p.name(), encode(value));
            } else if (p.required()) {
                query.put(p.name(), encode(sample(p.name(), p.schema(), 0).asText()));
            }
        }
        String contentType = null;
        byte[] body = null;
        if (op.bodyType() != null) {
            contentType = op.bodyType();
            if (op.bodyType().equals("application/json")) {
                JsonNode sample = bodySample(op);
                body = json.writeValueAsBytes(sample);
            } else if (op.bodyType().startsWith("multipart/")) {
                contentType = "multipart/form-data; boundary=" + BOUNDARY;
                body = multipart(Map.of(), "model.txt");
            } else {
                body = "hostile".getBytes(StandardCharsets.UTF_8);
            }
        }
        return new Call(op.method(), path, query, Map.of(), contentType, body, path);
    }

    private JsonNode bodySample(Operation op) {
        Object example = op.bodyMedia().getExample();
        if (example == null && op.bodyMedia().getExamples() != null && !op.bodyMedia().getExamples().isEmpty()) {
            example = op.bodyMedia().getExamples().values().iterator().next().getValue();
        }
        JsonNode sample = example != null ? json.valueToTree(example) : sample("body", op.body(), 0);
        if (sample instanceof ObjectNode object) {
            for (String name : List.copyOf(iterable(object))) {
                if (fields.containsKey(name)) {
                    object.set(name, fields.get(name).deepCopy());
                }
            }
        }
        return sample;
    }

    private static List<String> iterable(ObjectNode object) {
        List<String> names = new ArrayList<>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }

    /** The operation's path with world values, and {@code raw} (already encoded) in place of one parameter. */
    private String path(Operation op, String mutated, String raw) {
        Matcher m = PARAM.matcher(op.path());
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            String name = m.group(1);
            String value;
            if (name.equals(mutated)) {
                value = raw;
            } else {
                String key = name.equals("automation") && op.path().startsWith("/api/v1/registries/")
                        ? "registry automation"
                        : name;
                value = encode(world.getOrDefault(key, "hostile"));
            }
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    /** A value that the schema allows, from its example, default or type; world values where the name is one. */
    private JsonNode sample(String name, Schema<?> schema, int depth) {
        JsonNodeFactory nodes = JsonNodeFactory.instance;
        if (fields.containsKey(name) && depth > 0) {
            return fields.get(name).deepCopy();
        }
        if (schema == null) {
            return nodes.textNode("hostile");
        }
        if (schema.getExample() != null) {
            return json.valueToTree(schema.getExample());
        }
        if (schema.getDefault() != null) {
            return json.valueToTree(schema.getDefault());
        }
        if (schema.getEnum() != null && !schema.getEnum().isEmpty()) {
            return json.valueToTree(schema.getEnum().get(0));
        }
        if (schema.getOneOf() != null && !schema.getOneOf().isEmpty()) {
            return sample(name, schema.getOneOf().get(0), depth);
        }
        if (schema.getAnyOf() != null && !schema.getAnyOf().isEmpty()) {
            return sample(name, schema.getAnyOf().get(0), depth);
        }
        String type = ContractOperations.type(schema);
        if (type == null) {
            return nodes.textNode("hostile");
        }
        switch (type) {
            case "integer":
                return nodes.numberNode(schema.getMinimum() != null ? schema.getMinimum().longValue() : 1L);
            case "number":
                return nodes.numberNode(schema.getMinimum() != null ? schema.getMinimum().doubleValue() : 1.0);
            case "boolean":
                return nodes.booleanNode(false);
            case "array": {
                ArrayNode array = nodes.arrayNode();
                if (depth < 4) {
                    array.add(sample(name, schema.getItems(), depth + 1));
                }
                return array;
            }
            case "object": {
                ObjectNode object = nodes.objectNode();
                if (depth >= 4) {
                    return object;
                }
                Map<String, Schema> properties = new LinkedHashMap<>();
                if (schema.getAllOf() != null) {
                    for (Schema<?> part : schema.getAllOf()) {
                        if (part.getProperties() != null) {
                            properties.putAll(part.getProperties());
                        }
                    }
                }
                if (schema.getProperties() != null) {
                    properties.putAll(schema.getProperties());
                }
                List<String> required = schema.getRequired() == null ? List.of() : schema.getRequired();
                properties.forEach((field, fieldSchema) -> {
                    if (required.contains(field) || fields.containsKey(field)) {
                        object.set(field, fields.containsKey(field) ? fields.get(field).deepCopy()
                                : sample(field, fieldSchema, depth + 1));
                    }
                });
                return object;
            }
            default:
                if ("uri".equals(schema.getFormat()) || "url".equals(schema.getFormat())) {
                    return nodes.textNode("http://127.0.0.1:9/hostile");
                }
                if ("date-time".equals(schema.getFormat())) {
                    return nodes.textNode("2024-01-01T00:00:00Z");
                }
                if ("email".equals(schema.getFormat())) {
                    return nodes.textNode("hostile@example.com");
                }
                return nodes.textNode(
                        name.equals("name") || name.equals("username") || name.equals("id") ? unique("hostile")
                                : "hostile");
        }
    }

    // ---- sending and judging ----

    /** Sends the call, judges the answer, and answers its status. */
    private int send(Operation op, String target, String mutation, Call call) throws IOException, InterruptedException {
        StringBuilder uri = new StringBuilder(base.toString().replaceAll("/$", "")).append(call.path());
        if (!call.query().isEmpty()) {
            uri.append('?');
            call.query().forEach((name, value) -> uri.append(name).append('=').append(value).append('&'));
            uri.setLength(uri.length() - 1);
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(uri.toString())).timeout(Duration.ofSeconds(60))
                .header("Authorization", "Bearer " + ADMIN);
        call.headers().forEach(request::header);
        if (call.contentType() != null) {
            request.header("Content-Type", call.contentType());
        }
        request.method(call.method(), call.body() == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(call.body()));
        requests++;
        HttpResponse<byte[]> response;
        try {
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException closed) {
            // the server closes a connection after some errors; the client may have reused it already
            try {
                response = http.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            } catch (IOException e) {
                failures.add(new Failure(op, target, mutation, 0, "no answer: " + e, ""));
                return 0;
            }
        }
        int status = response.statusCode();
        statuses.merge(status, 1, Integer::sum);
        String body = new String(response.body(), StandardCharsets.UTF_8);
        String contentType = response.headers().firstValue("Content-Type").orElse(null);
        String excerpt = body.length() > 160 ? body.substring(0, 160) + "..." : body;
        String problem = judge(op, call, status, contentType, body);
        if (problem != null) {
            failures.add(new Failure(op, target, mutation, status, problem, excerpt.replace('\n', ' ')));
        }
        return status;
    }

    /** What is wrong with the answer, or null. */
    private String judge(Operation op, Call call, int status, String contentType, String body) {
        if (status >= 500 && (status == 500 || !op.documents(status))) {
            return "server error";
        }
        if (!op.documents(status)) {
            return "undocumented status";
        }
        if (status >= 400 && status < 500) {
            String shape = shapeProblem(op.errorShape(), status, contentType, body);
            if (shape != null) {
                return shape;
            }
        }
        OpenApiInteractionValidator validator = validators.computeIfAbsent(op.document(), Contract::validator);
        SimpleResponse.Builder response = SimpleResponse.Builder.status(status).withBody(body);
        if (contentType != null) {
            response.withContentType(contentType);
        }
        ValidationReport report = validator.validateResponse(call.validPath(), Request.Method.valueOf(op.method()),
                response.build());
        List<String> errors = report.getMessages().stream()
                .filter(m -> m.getLevel() == ValidationReport.Level.ERROR
                        && !m.getKey().startsWith("validation.request"))
                // no lines at all is an empty JSON Lines list
                .filter(m -> !(m.getKey().equals("validation.response.body.missing") && contentType != null
                        && contentType.startsWith("application/jsonl")))
                .map(m -> m.getKey() + ": " + m.getMessage()).toList();
        return errors.isEmpty() ? null : "not valid against the document: " + errors;
    }

    private String shapeProblem(ErrorShape shape, int status, String contentType, String body) {
        JsonNode error;
        try {
            error = json.readTree(body);
        } catch (IOException e) {
            error = null;
        }
        if (error == null || !error.isObject()) {
            return "error body is not a JSON object";
        }
        return switch (shape) {
            case PROBLEM -> contentType != null && contentType.startsWith("application/problem+json")
                    && error.path("status").asInt() == status && error.path("title").isTextual() ? null
                            : "not problem details";
            case DETAIL ->
                    error.path("detail").isTextual() || error.path("detail").isArray() ? null : "not {\"detail\": ...}";
            case OPENAI ->
                    error.path("error").path("message").isTextual() && error.path("error").path("type").isTextual()
                            ? null
                            : "not an OpenAI error";
            case GRAPHQL -> error.path("errors").path(0).path("message").isTextual() ? null
                    : "not GraphQL's {\"errors\": [...]}";
        };
    }
}
