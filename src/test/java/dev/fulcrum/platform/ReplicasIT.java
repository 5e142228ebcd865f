package dev.fulcrum.platform;

import static io.restassured.RestAssured.given;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.not;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import com.sun.net.httpserver.HttpServer;

import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import dev.fulcrum.artifacts.S3ProxyResource;
import dev.fulcrum.inference.OpenAiStub;
import dev.fulcrum.support.PackagedJar;

/**
 * Two replicas of the packaged application on one standalone PostgreSQL and one S3-compatible blob store behave as one
 * server: what one replica writes or revokes holds on the other at once, limits and quotas count both, a training job
 * runs on exactly one and survives its death, and every webhook event is delivered although a replica is SIGKILLed
 * while they are produced.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ReplicasIT {

    private static final Path LOGS = Path.of("target", "replicas-it");
    private static final Duration READY_WITHIN = Duration.ofSeconds(150);
    private static final String KEY = "fk_replicas-it-admin-0123456789";
    private static final int CONCURRENCY_LIMIT = 3;
    private static final int QUOTA = 100;
    /** Prompt and completion tokens of one completion of the stub's {@code echo} model. */
    private static final int ECHO_TOKENS = 16;
    private static final int EVENTS = 2000;
    /** How long after the SIGKILL the receiver may still take requests the killed replica had sent. */
    private static final Duration IN_FLIGHT_AT_KILL = Duration.ofSeconds(5);
    private static final int REVOCATIONS = 100;
    /** The bound on the time a revocation through one replica takes to be refused by the other, at p99. */
    private static final Duration REVOCATION_P99 = Duration.ofMillis(100);
    /** How long a replica waits before its access listener connects again (long enough to be seen down). */
    private static final Duration LISTENER_RETRY = Duration.ofSeconds(3);

    private static EmbeddedPostgres postgres;
    private static S3ProxyResource s3;
    private static OpenAiStub stub;
    private static HttpServer receiver;
    private static final Map<String, List<Long>> received = new ConcurrentHashMap<>();
    private static Path work;
    private static Replica a;
    private static Replica b;

    /** One Fulcrum process. */
    record Replica(String name, Process process, int port) {
        String url() {
            return "http://127.0.0.1:" + port;
        }
    }

    @BeforeAll
    static void startCluster() throws Exception {
        assertTrue(Files.isRegularFile(PackagedJar.JAR), PackagedJar.JAR + " is built by the package phase");
        Files.createDirectories(LOGS);
        work = Files.createTempDirectory("fulcrum-replicas");
        postgres = EmbeddedPostgres.builder().start();
        Map<String, String> blobStore = (s3 = new S3ProxyResource()).start();
        stub = new OpenAiStub();
        receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 512);
        receiver.setExecutor(Executors.newFixedThreadPool(16));
        receiver.createContext("/hook", exchange -> {
            exchange.getRequestBody().readAllBytes();
            String id = exchange.getRequestHeaders().getFirst("webhook-id");
            if (id != null) {
                received.computeIfAbsent(id, k -> java.util.Collections.synchronizedList(new ArrayList<>()))
                        .add(System.nanoTime());
            }
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        receiver.start();

        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        KeyPair jwt = generator.generateKeyPair();
        Path privateKey = pem(work.resolve("jwt-private.pem"), "PRIVATE KEY", jwt.getPrivate().getEncoded());
        Path publicKey = pem(work.resolve("jwt-public.pem"), "PUBLIC KEY", jwt.getPublic().getEncoded());
        byte[] master = new byte[32];
        new SecureRandom().nextBytes(master);

        List<String> shared = new ArrayList<>(List.of(
                "-Dquarkus.datasource.jdbc.url=" + postgres.getJdbcUrl("postgres", "postgres"),
                "-Dquarkus.datasource.username=postgres", "-Dquarkus.datasource.password=postgres",
                "-Dfulcrum.bootstrap-api-key=" + KEY,
                "-Dfulcrum.secrets.master-key=" + Base64.getEncoder().encodeToString(master),
                "-Dfulcrum.jwt.private-key=" + privateKey, "-Dfulcrum.jwt.public-key=" + publicKey,
                "-Dfulcrum.webhooks.allow-http=true", "-Dfulcrum.webhooks.allowed-networks=127.0.0.0/8",
                "-Dfulcrum.webhooks.lease=8s", "-Dfulcrum.webhooks.request-timeout=3s", "-Dfulcrum.training.lease=8s",
                "-Dfulcrum.inference.max-concurrent-requests-per-project=" + CONCURRENCY_LIMIT,
                "-Dfulcrum.inference.team-monthly-token-quotas.spender=" + QUOTA,
                "-Dfulcrum.inference.quota-refresh=1s",
                "-Dfulcrum.access.listener-retry=" + LISTENER_RETRY.toSeconds() + "s",
                "-Dfulcrum.inference.models.echo.base-url=" + stub.baseUrl(),
                "-Dfulcrum.inference.models.held.base-url=" + stub.baseUrl(),
                "-Dfulcrum.inference.models.held.upstream-model=held"));
        blobStore.forEach((name, value) -> shared.add("-D" + name + "=" + value));
        // one after the other: the first creates the schema and the administrator
        a = start("a", shared);
        awaitReady(a);
        b = start("b", shared);
        awaitReady(b);
    }

    @AfterAll
    static void stopCluster() throws Exception {
        for (Replica replica : new Replica[] { a, b }) {
            if (replica != null && replica.process().isAlive()) {
                replica.process().destroy();
                if (!replica.process().waitFor(30, TimeUnit.SECONDS)) {
                    replica.process().destroyForcibly();
                }
            }
        }
        if (receiver != null) {
            receiver.stop(0);
        }
        if (stub != null) {
            stub.close();
        }
        if (s3 != null) {
            s3.stop();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    @Order(1)
    void artifactFilesWrittenThroughOneReplicaDownloadThroughTheOther() {
        byte[] content = "weights written through replica a\n".repeat(1000).getBytes(StandardCharsets.UTF_8);
        as(a, KEY).contentType("multipart/form-data").multiPart("file", "model.bin", content).multiPart("type", "model")
                .post("/api/v1/entities/admin/projects/files/artifacts/collections/" + "weights/versions").then()
                .statusCode(201);
        byte[] downloaded = as(b, KEY).queryParam("path", "model.bin")
                .get("/api/v1/entities/admin/projects/files/artifacts/collections/weights/versions/v0/download").then()
                .statusCode(200).extract().asByteArray();
        assertEquals(new String(content, StandardCharsets.UTF_8), new String(downloaded, StandardCharsets.UTF_8));
    }

    @Test
    @Order(2)
    void aMemberRemovedOrAKeyRevokedThroughOneReplicaIsRefusedByTheOtherOnTheNextRequest() {
        String reader = user(a, "reader");
        asJson(a, KEY).body(Map.of("name", "crew")).post("/api/v1/teams").then().statusCode(201);
        asJson(a, KEY).body(Map.of("role", "member")).put("/api/v1/teams/crew/members/reader").then().statusCode(200);
        Response created = asJson(a, KEY).body(Map.of("name", "Shared", "rows", List.of(Map.of("q", "2+2", "a", 4))))
                .post("/v2/crew/shared/datasets");
        created.then().statusCode(200);
        String datasetPath = "/v2/crew/shared/datasets/" + created.path("object_id") + "/versions/"
                + created.path("digest");
        for (int i = 0; i < 2; i++) { // the second answer of each comes from replica b's caches
            as(b, reader).get(datasetPath).then().statusCode(200);
            chat(b, reader, "crew/shared", "echo").then().statusCode(200);
            chat(b, reader, null, "echo").then().statusCode(200);
        }

        as(a, KEY).delete("/api/v1/teams/crew/members/reader").then().statusCode(204);
        as(b, reader).get(datasetPath).then().statusCode(not(equalTo(200)));
        chat(b, reader, "crew/shared", "echo").then().statusCode(403);
        chat(b, reader, null, "echo").then().statusCode(200); // the key itself is still good

        long keyId = ((Number) as(b, reader).get("/api/v1/users/me/api-keys").then().statusCode(200).extract()
                .jsonPath().getList("id").get(0)).longValue();
        as(a, reader).delete("/api/v1/users/me/api-keys/" + keyId).then().statusCode(204);
        as(b, reader).get(datasetPath).then().statusCode(401);
        chat(b, reader, null, "echo").then().statusCode(401);
    }

    @Test
    @Order(3)
    void aKeyRevokedThroughOneReplicaIsRefusedByTheOtherWithinMilliseconds() throws Exception {
        String owner = user(a, "revoker");
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        long[] nanos = new long[REVOCATIONS];
        int[] polls = new int[REVOCATIONS];
        for (int i = 0; i < REVOCATIONS; i++) {
            Response created = asJson(a, owner).body(Map.of("name", "k" + i)).post("/api/v1/users/me/api-keys");
            created.then().statusCode(201);
            String key = created.path("key");
            long id = ((Number) created.path("id")).longValue();
            // b checks the key once and answers the next request from memory
            for (int j = 0; j < 2; j++) {
                assertEquals(200, models(http, b, key));
            }
            as(a, owner).delete("/api/v1/users/me/api-keys/" + id).then().statusCode(204);
            long revoked = System.nanoTime(); // a answered: the revocation is committed
            int status;
            do {
                status = models(http, b, key);
                polls[i]++;
            } while (status == 200 && System.nanoTime() - revoked < Duration.ofSeconds(10).toNanos());
            nanos[i] = System.nanoTime() - revoked;
            assertEquals(401, status, "revocation " + i + " refused by replica b");
        }
        long[] sorted = nanos.clone();
        java.util.Arrays.sort(sorted);
        double p50 = sorted[REVOCATIONS / 2] / 1e6;
        double p99 = sorted[(int) Math.ceil(REVOCATIONS * 0.99) - 1] / 1e6;
        double max = sorted[REVOCATIONS - 1] / 1e6;
        long refusedAtFirst = java.util.Arrays.stream(polls).filter(n -> n == 1).count();
        System.out.printf(
                "revocation through replica a until replica b refuses, %d keys: p50 %.2f ms, p99 %.2f ms, max %.2f ms"
                        + " (%d of them refused by b's first request after a answered)%n",
                REVOCATIONS, p50, p99, max, refusedAtFirst);
        assertTrue(p99 <= REVOCATION_P99.toMillis(), "p99 " + p99 + " ms within " + REVOCATION_P99);
    }

    @Test
    @Order(4)
    void whileItsListenerIsDownAReplicaChecksEveryRequestAndSaysSo() throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        String owner = user(a, "unheard");
        Response created = asJson(a, owner).body(Map.of("name", "cached")).post("/api/v1/users/me/api-keys");
        String key = created.path("key");
        long id = ((Number) created.path("id")).longValue();
        assertEquals("push", accessMode(b));
        for (int j = 0; j < 2; j++) {
            assertEquals(200, models(http, b, key));
        }

        assertEquals(1, count("select count(pg_terminate_backend(pid)) from pg_stat_activity where application_name = '"
                + "fulcrum-access-listener-" + b.process().pid() + "'"), "replica b's listening backend");
        await().atMost(Duration.ofSeconds(5)).until(() -> "per-request".equals(accessMode(b)));
        assertEquals(200, models(http, b, key)); // checked against the database, still good

        // a revocation b cannot hear of: refused by b's next request all the same
        as(a, owner).delete("/api/v1/users/me/api-keys/" + id).then().statusCode(204);
        assertEquals(401, models(http, b, key));
        chat(b, key, null, "echo").then().statusCode(401);
        System.out.printf("replica b in mode %s (listener down) refused the revoked key on its first request%n",
                accessMode(b));

        // the listener comes back by itself, and with it the decisions kept in memory
        await().atMost(LISTENER_RETRY.plusSeconds(10)).until(() -> "push".equals(accessMode(b)));
        assertEquals(1, count("select count(*) from pg_stat_activity where application_name = '"
                + "fulcrum-access-listener-" + b.process().pid() + "'"));
    }

    @Test
    @Order(5)
    void theConcurrencyLimitOfAProjectCountsTheRequestsOfBothReplicas() throws Exception {
        String busy = user(a, "busy");
        int before = stub.held.get();
        List<CompletableFuture<Response>> running = List.of(
                CompletableFuture.supplyAsync(() -> chat(a, busy, null, "held")),
                CompletableFuture.supplyAsync(() -> chat(a, busy, null, "held")),
                CompletableFuture.supplyAsync(() -> chat(b, busy, null, "held")));
        await().atMost(Duration.ofSeconds(30)).until(() -> stub.held.get() == before + CONCURRENCY_LIMIT);
        chat(b, busy, null, "echo").then().statusCode(429).body("error.type", equalTo("rate_limit_error"));
        chat(a, busy, null, "echo").then().statusCode(429).body("error.type", equalTo("rate_limit_error"));
        stub.release();
        for (CompletableFuture<Response> response : running) {
            response.get(30, TimeUnit.SECONDS).then().statusCode(200);
        }
        // freed slots go back to the database as the requests end, for whichever replica asks next
        await().atMost(Duration.ofSeconds(10)).until(() -> chat(b, busy, null, "echo").statusCode() == 200);
    }

    @Test
    @Order(6)
    void theMonthlyTokenQuotaOfATeamCountsTheTokensOfBothReplicas() throws Exception {
        String spender = user(a, "spender");
        int admitted = 0;
        int refusedInARow = 0;
        for (int i = 0; i < 40 && refusedInARow < 2; i++) {
            Response response = chat(i % 2 == 0 ? a : b, spender, null, "echo");
            if (response.statusCode() == 200) {
                admitted++;
                refusedInARow = 0;
            } else {
                response.then().statusCode(402).body("error.code", equalTo("insufficient_quota"));
                refusedInARow++;
            }
        }
        long used = awaitUsage("spender", admitted);
        System.out.printf(
                "token quota %d: %d completions admitted alternately through both replicas, %d tokens used"
                        + " (one replica alone admits %d)%n",
                QUOTA, admitted, used, (QUOTA + ECHO_TOKENS - 1) / ECHO_TOKENS);
        // a completion is admitted while the team's count is below the quota: 0, 16, ..., 96, then 112 >= 100
        assertEquals((QUOTA + ECHO_TOKENS - 1) / ECHO_TOKENS, admitted, "completions admitted on both together");
        assertTrue(used < QUOTA + ECHO_TOKENS, used + " tokens used");
        chat(a, spender, null, "echo").then().statusCode(402);
        chat(b, spender, null, "echo").then().statusCode(402);
    }

    @Test
    @Order(7)
    void everyWebhookEventIsDeliveredAndATrainingJobSurvivesTheReplicaThatDiedRunningIt() throws Exception {
        // the webhook: an automation on tag events of a project's artifact version, signed with a team secret
        asJson(a, KEY).body(Map.of("name", "hooks")).post("/api/v1/teams").then().statusCode(201);
        asJson(a, KEY)
                .body(Map.of("name", "SIGNING", "value",
                        "whsec_" + Base64.getEncoder()
                                .encodeToString("replicas-it-signing-secret-0123".getBytes(StandardCharsets.UTF_8))))
                .post("/api/v1/teams/hooks/secrets").then().statusCode(201);
        int webhook = asJson(a, KEY)
                .body(Map.of("name", "receiver", "url", "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook",
                        "signing_secret", "SIGNING"))
                .post("/api/v1/teams/hooks/webhooks").then().statusCode(201).extract().path("id");
        String project = "/api/v1/entities/hooks/projects/events";
        as(a, KEY).contentType("multipart/form-data").multiPart("file", "model.txt", "weights".getBytes())
                .multiPart("type", "model").post(project + "/artifacts/collections/model/versions").then()
                .statusCode(201);
        asJson(a, KEY)
                .body(Map.of("name", "on-tag", "event", "ADD_ARTIFACT_TAG", "team", "hooks", "action_type", "Webhooks",
                        "webhook_id", webhook, "payload", "{\"tag\": \"${tag}\"}"))
                .post(project + "/automations").then().statusCode(201);

        // the training job's data and model: SFT of the built-in model on data stored in the blob store
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < 20; i++) {
            lines.append("{\"messages\": [{\"role\": \"user\", \"content\": \"What is ").append(i)
                    .append(" plus one?\"}, {\"role\": \"assistant\", \"content\": \"").append(i + 1).append("\"}]}\n");
        }
        as(a, KEY).contentType("multipart/form-data")
                .multiPart("file", "train.jsonl", lines.toString().getBytes(StandardCharsets.UTF_8),
                        "application/jsonl")
                .multiPart("type", "dataset")
                .post("/api/v1/entities/admin/projects/learn/artifacts/collections/" + "sums-data/versions").then()
                .statusCode(201);
        String model = asJson(a, KEY)
                .body(Map.of("entity", "admin", "project", "learn", "name", "sums", "base_model", "fulcrum-tiny"))
                .post("/v1/preview/models").then().statusCode(201).extract().path("id");

        // 2,000 tag events produced through both replicas (each tag to one, to the other while that one fails)
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        AtomicInteger produced = new AtomicInteger();
        AtomicInteger next = new AtomicInteger();
        ExecutorService producers = Executors.newFixedThreadPool(16);
        List<CompletableFuture<Void>> workers = new ArrayList<>();
        for (int w = 0; w < 16; w++) {
            workers.add(CompletableFuture.runAsync(() -> {
                for (int i = next.getAndIncrement(); i < EVENTS; i = next.getAndIncrement()) {
                    produce(http, project + "/artifacts/collections/model/versions/v0/tags/t" + i, i);
                    produced.incrementAndGet();
                }
            }, producers));
        }

        // meanwhile a training job starts, is claimed by exactly one replica, and that replica is SIGKILLed
        await().atMost(Duration.ofSeconds(120)).until(() -> produced.get() >= EVENTS / 5);
        String job = asJson(b, KEY)
                .body(Map.of("model_id", model, "training_data_url", "wandb-artifact:///admin/learn/sums-data:latest",
                        "config", Map.of("learning_rate", 3e-3, "batch_size", 4, "epochs", 8)))
                .post("/v1/preview/sft-training-jobs").then().statusCode(202).extract().path("id");
        await().atMost(Duration.ofSeconds(120)).until(() -> "running".equals(jobRow(job).status()) && stepsOf(job) > 0);
        JobRow claimed = jobRow(job);
        assertEquals(1, claimed.attempts(), "claimed once");
        Replica runner = claimed.leaseOwner().startsWith("cpu-" + a.process().pid() + "-") ? a : b;
        assertTrue(claimed.leaseOwner().startsWith("cpu-" + runner.process().pid() + "-"), claimed.leaseOwner());
        Replica survivor = runner == a ? b : a;
        int producedAtKill = produced.get();
        runner.process().destroyForcibly();
        assertTrue(runner.process().waitFor(30, TimeUnit.SECONDS), "SIGKILL ends replica " + runner.name());
        long killedAt = System.nanoTime();
        int receivedAtKill = received.size();
        CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(300, TimeUnit.SECONDS);
        producers.shutdown();

        assertEquals(EVENTS, count("select count(*) from webhook_deliveries"), "one delivery per event");
        await().atMost(Duration.ofSeconds(120)).until(() -> received.size() >= EVENTS);
        // a duplicate is a second send of a row whose lease ran out before its success was written; once no row is
        // pending, no send can follow, and each send reached the receiver before its row was written
        await("every delivery written as sent").atMost(Duration.ofSeconds(120))
                .until(() -> count("select count(*) from webhook_deliveries where state = 'pending'") == 0);
        int lost = EVENTS - received.size();
        List<String> duplicated = received.entrySet().stream().filter(e -> e.getValue().size() > 1)
                .map(Map.Entry::getKey).sorted().toList();
        int duplicates = received.values().stream().mapToInt(times -> times.size() - 1).sum();
        List<String> receipts = duplicated
                .stream().map(
                        id -> id + " at "
                                + received.get(id).stream()
                                        .map(at -> TimeUnit.NANOSECONDS.toMillis(at - killedAt) + " ms").toList())
                .toList();
        System.out.printf(
                "webhooks: %d events produced through both replicas, replica %s SIGKILLed after %d produced and %d"
                        + " received; %d delivered, %d lost, %d duplicates%s%n",
                EVENTS, runner.name(), producedAtKill, receivedAtKill, received.size(), lost, duplicates,
                receipts.isEmpty() ? "" : " (receipts relative to the kill: " + receipts + ")");
        assertEquals(0, lost, "events lost");
        for (String id : duplicated) {
            // the killed replica's requests in flight reach this receiver's handler up to a moment later
            long first = received.get(id).get(0);
            assertTrue(first < killedAt + IN_FLIGHT_AT_KILL.toNanos(),
                    "duplicate " + id + " was first received after the crash, not across it: " + receipts);
        }

        // the job's lease expires, the survivor claims it again and finishes it
        await().atMost(Duration.ofSeconds(180)).until(() -> "succeeded".equals(jobRow(job).status()));
        JobRow done = jobRow(job);
        System.out.printf("training job %s: claimed by replica %s, re-claimed after its death, %d attempts, %s%n", job,
                runner.name(), done.attempts(), done.status());
        assertEquals(2, done.attempts(), "claimed once more after the lease of the dead replica expired");
        assertEquals(1, count(
                "select count(*) from training_job_events where job_id = '" + job + "' and type = 'training_ended'"));
        as(survivor, KEY).get("/v1/preview/training-jobs/" + job).then().statusCode(200).body("status",
                equalTo("succeeded"));
    }

    private static void produce(HttpClient http, String path, int i) {
        Replica[] order = i % 2 == 0 ? new Replica[] { a, b } : new Replica[] { b, a };
        for (int attempt = 0; attempt < 200; attempt++) {
            Replica replica = order[attempt % 2];
            try {
                HttpRequest request = HttpRequest.newBuilder(URI.create(replica.url() + path))
                        .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + KEY)
                        .PUT(HttpRequest.BodyPublishers.noBody()).build();
                int status = http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
                if (status == 200) {
                    return; // adding a tag again records no second event: a retry after a lost answer is safe
                }
                if (status >= 400 && status < 500) {
                    throw new AssertionError("tag " + i + ": HTTP " + status);
                }
            } catch (IOException notThere) {
                // the killed replica: the next attempt goes to the other one
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        throw new AssertionError("tag " + i + " was never accepted");
    }

    record JobRow(String status, int attempts, String leaseOwner) {
    }

    private static JobRow jobRow(String job) {
        try (Connection connection = database();
                PreparedStatement query = connection
                        .prepareStatement("select status, attempts, lease_owner from training_jobs where id = ?")) {
            query.setString(1, job);
            try (ResultSet rs = query.executeQuery()) {
                rs.next();
                return new JobRow(rs.getString(1), rs.getInt(2), rs.getString(3));
            }
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    private static long stepsOf(String job) {
        return count(
                "select count(*) from training_job_events where job_id = '" + job + "' and type = 'gradient_step'");
    }

    private static long awaitUsage(String entity, int completions) {
        String sql = "select count(*), coalesce(sum(prompt_tokens + completion_tokens), 0) from inference_usage"
                + " where entity = '" + entity + "' and status = 200";
        await().atMost(Duration.ofSeconds(20)).until(() -> count(sql) == completions); // the usage writer batches
        try (Connection connection = database();
                PreparedStatement query = connection.prepareStatement(sql);
                ResultSet rs = query.executeQuery()) {
            rs.next();
            return rs.getLong(2);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    private static long count(String sql) {
        try (Connection connection = database();
                PreparedStatement query = connection.prepareStatement(sql);
                ResultSet rs = query.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    private static Connection database() throws SQLException {
        return DriverManager.getConnection(postgres.getJdbcUrl("postgres", "postgres"), "postgres", "postgres");
    }

    /** A new user with an API key issued by the administrator through replica a; the key. */
    private static String user(Replica replica, String name) {
        asJson(replica, KEY).body(Map.of("username", name)).post("/api/v1/users").then().statusCode(201);
        return asJson(replica, KEY).body(Map.of("name", "it")).post("/api/v1/users/" + name + "/api-keys").then()
                .statusCode(201).extract().path("key");
    }

    /** GET /v1/models through a replica with a key: its status (a plain client, so that its time is the server's). */
    private static int models(HttpClient http, Replica replica, String key) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(replica.url() + "/v1/models"))
                .header("Authorization", "Bearer " + key).timeout(Duration.ofSeconds(10)).build();
        try {
            return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException | InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** The access mode replica {@code replica}'s readiness reports: push, or per-request while its listener is down. */
    private static String accessMode(Replica replica) {
        return given().baseUri(replica.url()).get("/q/health/ready").then().extract().jsonPath()
                .getString("checks.find { it.name == 'Access changes' }.data.mode");
    }

    private static Response chat(Replica replica, String key, String project, String model) {
        RequestSpecification request = asJson(replica, key)
                .body(Map.of("model", model, "messages", List.of(Map.of("role", "user", "content", "Hello"))));
        if (project != null) {
            request.header("Compat-Project", project);
        }
        return request.post("/v1/chat/completions");
    }

    private static RequestSpecification as(Replica replica, String key) {
        return given().baseUri(replica.url()).auth().oauth2(key).log().ifValidationFails();
    }

    private static RequestSpecification asJson(Replica replica, String key) {
        return as(replica, key).contentType(ContentType.JSON);
    }

    private static Replica start(String name, List<String> shared) throws IOException {
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort();
        }
        List<String> options = new ArrayList<>(List.of("-Xmx384m"));
        options.addAll(shared);
        options.addAll(List.of("-Dquarkus.http.port=" + port, "-Dquarkus.http.host=127.0.0.1",
                "-Dfulcrum.data-dir=" + Files.createDirectories(work.resolve(name))));
        ProcessBuilder builder = new ProcessBuilder(PackagedJar.command(options.toArray(String[]::new)))
                .redirectErrorStream(true).redirectOutput(LOGS.resolve("replica-" + name + ".log").toFile());
        builder.environment().keySet().removeIf(n -> n.startsWith("QUARKUS_") || n.startsWith("FULCRUM_"));
        return new Replica(name, builder.start(), port);
    }

    private static void awaitReady(Replica replica) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        await("replica " + replica.name() + " ready, see " + LOGS.resolve("replica-" + replica.name() + ".log"))
                .atMost(READY_WITHIN).pollInterval(Duration.ofMillis(250)).until(() -> {
                    if (!replica.process().isAlive()) {
                        fail("Replica " + replica.name() + " exited with " + replica.process().exitValue() + ", see "
                                + LOGS.resolve("replica-" + replica.name() + ".log"));
                    }
                    try {
                        HttpRequest request = HttpRequest.newBuilder(URI.create(replica.url() + "/q/health/ready"))
                                .timeout(Duration.ofSeconds(10)).build();
                        return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
                    } catch (IOException notYet) {
                        return false; // not listening yet
                    }
                });
    }

    private static Path pem(Path file, String type, byte[] der) throws IOException {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        return Files.writeString(file, "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n");
    }
}
