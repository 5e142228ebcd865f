package dev.fulcrum.inference;

import static dev.fulcrum.inference.Inference.as;
import static dev.fulcrum.inference.Inference.asAdmin;
import static dev.fulcrum.inference.Inference.chat;
import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntFunction;

import jakarta.inject.Inject;

import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.PrometheusText;
import dev.fulcrum.support.TestDns;

/**
 * A model served by several replicas of its server (issue 53): real HTTP replicas in the test ({@link ReplicaStub}),
 * the gateway choosing, ejecting, probing, retrying and falling back, a DNS server of the test's own for a host name
 * with several addresses. The test profile probes every 200 ms, ejects for 1 s at first, resolves names every 200 ms.
 */
@QuarkusTest
class ReplicaRoutingTest {

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/v1/chat/completions")
    URI chatUri;

    @ConfigProperty(name = "test-dns.zone")
    Path zone;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** Adds a model of the replicas' base URLs (and any other fields), answering as {@link ReplicaStub#BASE}. */
    private static String model(String name, List<String> urls, Map<String, Object> extra) {
        String id = Fixtures.unique("replicas/" + name);
        JsonObject body = new JsonObject().put("id", id).put("backend", "openai-compatible")
                .put("base_urls", new JsonArray(urls)).put("upstream_model", ReplicaStub.BASE);
        extra.forEach(body::put);
        asAdmin().body(body.encode()).post("/api/v1/admin/models").then().statusCode(201);
        return id;
    }

    /** {@code count} replicas on free ports of 127.0.0.1, each answering after {@code serviceMillis}. */
    private static List<ReplicaStub> replicas(int count, long serviceMillis) {
        List<ReplicaStub> stubs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ReplicaStub stub = new ReplicaStub("127.0.0.1", 0);
            stub.serviceMillis = serviceMillis;
            stubs.add(stub);
        }
        return stubs;
    }

    private static List<String> urls(ReplicaStub... stubs) {
        return java.util.Arrays.stream(stubs).map(ReplicaStub::baseUrl).toList();
    }

    private static JsonPath replicas(String id) {
        return asAdmin().get("/api/v1/admin/models/{id}", id).then().statusCode(200).extract().jsonPath();
    }

    private static String state(String id, String name) {
        for (Map<String, Object> replica : replicas(id).<Map<String, Object>> getList("replicas")) {
            if (name.equals(replica.get("name"))) {
                return (String) replica.get("state");
            }
        }
        return "absent";
    }

    /** One chat over HTTP: the status and the body (a stream's whole text). */
    private HttpResponse<String> send(String key, Map<String, Object> body) {
        HttpRequest request = HttpRequest.newBuilder(chatUri).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(new JsonObject(body).encode())).build();
        try {
            return http.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Whether an answer is a complete success: 200, and a stream without an error event. */
    private static boolean succeeded(HttpResponse<String> response) {
        return response.statusCode() == 200 && !response.body().contains("\"error\"");
    }

    /** Runs {@code requests} requests made by {@code request} over {@code connections} threads; the failed ones. */
    private List<String> load(int connections, int requests, IntFunction<Map<String, Object>> request, String key) {
        ExecutorService pool = Executors.newFixedThreadPool(connections);
        List<String> failures = new CopyOnWriteArrayList<>();
        for (int i = 0; i < requests; i++) {
            int n = i;
            pool.execute(() -> {
                HttpResponse<String> response = send(key, request.apply(n));
                if (!succeeded(response)) {
                    failures.add(response.statusCode() + " " + response.body());
                }
            });
        }
        pool.shutdown();
        try {
            assertTrue(pool.awaitTermination(2, TimeUnit.MINUTES));
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        return failures;
    }

    @Test
    void uniformLoadIsSpreadEvenly() {
        Account user = fixtures.user("spread");
        List<ReplicaStub> stubs = replicas(3, 20);
        try {
            String id = model("spread", urls(stubs.toArray(ReplicaStub[]::new)), Map.of());
            List<String> failures = load(32, 480, n -> chat(id, "request " + n), user.key());
            assertEquals(List.of(), failures);
            double mean = 480 / 3.0;
            for (ReplicaStub stub : stubs) {
                assertTrue(Math.abs(stub.chats.get() - mean) <= 0.15 * mean,
                        stub.name() + " took " + stub.chats.get() + " of 480");
            }
        } finally {
            stubs.forEach(ReplicaStub::close);
        }
    }

    @Test
    void aReplicaOfWeightTwoTakesTwiceTheShare() {
        Account user = fixtures.user("weights");
        ReplicaStub heavy = new ReplicaStub("127.0.0.1", 0);
        ReplicaStub light = new ReplicaStub("127.0.0.1", 0);
        try {
            heavy.serviceMillis = 20;
            light.serviceMillis = 20;
            String id = model("weights", List.of(heavy.baseUrl() + "#weight=2", light.baseUrl()), Map.of());
            assertEquals(List.of(), load(32, 450, n -> chat(id, "weighted " + n), user.key()));
            double ratio = (double) heavy.chats.get() / light.chats.get();
            assertTrue(Math.abs(ratio - 2) <= 0.3, heavy.chats.get() + " against " + light.chats.get());
        } finally {
            heavy.close();
            light.close();
        }
    }

    @Test
    void aReplicaKilledUnderLoadCostsNoRequestThatWasNotStreamingAndComesBackAfterItsProbe() throws Exception {
        Account user = fixtures.user("killed");
        ReplicaStub a = new ReplicaStub("127.0.2.1", 0); // b is restarted: not at 127.0.0.1 (see ReplicaStub.start)
        ReplicaStub b = new ReplicaStub("127.0.2.2", 0);
        ReplicaStub c = new ReplicaStub("127.0.2.3", 0);
        try {
            for (ReplicaStub stub : List.of(a, b, c)) {
                stub.serviceMillis = 30;
            }
            String id = model("killed", urls(a, b, c), Map.of());
            ExecutorService pool = Executors.newFixedThreadPool(32);
            AtomicBoolean running = new AtomicBoolean(true);
            List<String> failures = new CopyOnWriteArrayList<>();
            List<Integer> done = new CopyOnWriteArrayList<>();
            for (int t = 0; t < 32; t++) {
                int thread = t;
                pool.execute(() -> {
                    for (int n = 0; running.get(); n++) {
                        Map<String, Object> body = new HashMap<>(chat(id, "killed " + thread + "/" + n));
                        body.put("stream", (n + thread) % 2 == 0);
                        HttpResponse<String> response = send(user.key(), body);
                        done.add(1);
                        if (!succeeded(response)) {
                            failures.add(response.statusCode() + " " + response.body());
                        }
                    }
                });
            }
            await().atMost(Duration.ofSeconds(20)).until(() -> done.size() >= 150);
            b.stop();
            int atKill = done.size();
            await().atMost(Duration.ofSeconds(20)).until(() -> done.size() >= atKill + 400);
            running.set(false);
            pool.shutdown();
            assertTrue(pool.awaitTermination(1, TimeUnit.MINUTES));
            assertEquals(List.of(), failures, "every request of the load succeeded");
            JsonPath model = replicas(id);
            assertEquals("ejected", state(id, b.name()), model.prettify());
            assertEquals("healthy", state(id, a.name()));
            assertTrue(
                    PrometheusText.fetch().sum("fulcrum_upstream_retries_total",
                            Map.of("model", id, "replica", b.name())) > 0,
                    "the requests that met it were sent elsewhere");
            assertTrue(PrometheusText.fetch().sum("fulcrum_upstream_ejections_total",
                    Map.of("model", id, "replica", b.name())) >= 1);

            // back: the first probe (every 200 ms) after its cool-down finds it
            // read before it comes back: a probe may restore it as soon as it listens
            OffsetDateTime until = OffsetDateTime.parse(ejectedUntil(id, b.name()));
            b.start();
            OffsetDateTime back = OffsetDateTime.now();
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .until(() -> "healthy".equals(state(id, b.name())));
            long late = Duration.between(until.isAfter(back) ? until : back, OffsetDateTime.now()).toMillis();
            assertTrue(late < 200 + 300, "restored " + late + " ms after it came back (probes every 200 ms)");
            int before = b.chats.get();
            assertEquals(List.of(), load(4, 30, n -> chat(id, "after " + n), user.key()));
            assertTrue(b.chats.get() > before, "it takes requests again");
        } finally {
            a.close();
            b.close();
            c.close();
        }
    }

    private static String ejectedUntil(String id, String name) {
        for (Map<String, Object> replica : replicas(id).<Map<String, Object>> getList("replicas")) {
            if (name.equals(replica.get("name"))) {
                return (String) replica.get("ejected_until");
            }
        }
        throw new AssertionError(name + " is not a replica");
    }

    @Test
    void aReplicaAnswering503Or429IsRetriedElsewhere() {
        Account user = fixtures.user("retried");
        ReplicaStub failing = new ReplicaStub("127.0.0.1", 0);
        ReplicaStub healthy = new ReplicaStub("127.0.0.1", 0);
        try {
            for (int status : List.of(503, 429)) {
                failing.status = status;
                String id = model("retried-" + status, urls(failing, healthy), Map.of());
                int before = healthy.chats.get();
                for (int i = 0; i < 12; i++) {
                    as(user.key()).body(chat(id, "retry " + i)).post("/v1/chat/completions").then().statusCode(200)
                            .body("choices[0].message.content", equalTo("from " + healthy.name()))
                            .body("model", equalTo(id));
                }
                assertEquals(12, healthy.chats.get() - before);
                assertTrue(PrometheusText.fetch().sum("fulcrum_upstream_retries_total",
                        Map.of("model", id, "replica", failing.name())) >= 1, "status " + status);
            }
        } finally {
            failing.close();
            healthy.close();
        }
    }

    @Test
    void fallbacksAnswerWhenEveryReplicaFailsOrIsGone() {
        Account user = fixtures.user("fallbacks");
        ReplicaStub broken = new ReplicaStub("127.0.0.1", 0);
        ReplicaStub spare = new ReplicaStub("127.0.0.1", 0);
        ReplicaStub gone = new ReplicaStub("127.0.0.1", 0);
        gone.stop();
        try {
            broken.status = 500;
            String alsoBroken = model("also-broken", urls(broken), Map.of());
            String fallback = model("spare", urls(spare), Map.of());
            String id = model("falls-back", urls(broken),
                    Map.of("fallbacks", new JsonArray().add(alsoBroken).add(fallback)));
            as(user.key()).body(chat(id, "Hi")).post("/v1/chat/completions").then().statusCode(200)
                    .header("Fulcrum-Fallback-From", id).body("model", equalTo(fallback))
                    .body("choices[0].message.content", equalTo("from " + spare.name()));
            Map<String, Object> streamed = new HashMap<>(chat(id, "Hi"));
            streamed.put("stream", true);
            String stream = as(user.key()).body(streamed).post("/v1/chat/completions").then().statusCode(200)
                    .header("Fulcrum-Fallback-From", id).extract().asString();
            assertTrue(stream.contains("\"model\":\"" + fallback + "\""), stream);
            assertTrue(stream.endsWith("data: [DONE]\n\n"), stream);

            // a model whose only replica is down: its connections are refused, retried, then the fallback answers
            String down = model("down", urls(gone), Map.of("fallbacks", new JsonArray().add(fallback)));
            for (int i = 0; i < 5; i++) {
                as(user.key()).body(chat(down, "Hi " + i)).post("/v1/chat/completions").then().statusCode(200)
                        .header("Fulcrum-Fallback-From", down).body("model", equalTo(fallback));
            }
            assertEquals("ejected", state(down, gone.name()));
            assertTrue(PrometheusText.fetch().sum("fulcrum_inference_fallbacks_total",
                    Map.of("model", down, "fallback", fallback)) >= 5);

            // without a fallback the client gets the failure
            String alone = model("alone", urls(broken), Map.of());
            as(user.key()).body(chat(alone, "Hi")).post("/v1/chat/completions").then().statusCode(502)
                    .body("error.message", containsString("replica says 500"));
        } finally {
            broken.close();
            spare.close();
            gone.close();
        }
    }

    @Test
    void aHostNameIsOneReplicaPerAddressResolvedAgainAsItChanges() {
        Account user = fixtures.user("dns");
        ReplicaStub first = new ReplicaStub("127.0.0.2", 0);
        ReplicaStub second = new ReplicaStub("127.0.0.3", first.port());
        String name = Fixtures.unique("pool").replaceAll("[^a-z0-9-]", "-") + ".fulcrum.test";
        try {
            TestDns.write(zone, Map.of(name, List.of("127.0.0.2")));
            String id = model("dns", List.of("http://" + name + ":" + first.port() + "/v1"), Map.of());
            await().atMost(Duration.ofSeconds(5)).until(() -> "healthy".equals(state(id, first.name())));
            assertEquals(List.of(), load(4, 20, n -> chat(id, "dns " + n), user.key()));
            assertEquals(20, first.chats.get());

            TestDns.write(zone, Map.of(name, List.of("127.0.0.2", "127.0.0.3")));
            await().atMost(Duration.ofSeconds(5)).until(() -> "healthy".equals(state(id, second.name())));
            assertEquals(List.of(), load(4, 40, n -> chat(id, "dns " + n), user.key()));
            assertTrue(second.chats.get() >= 10, "the new address takes requests: " + second.chats.get());

            TestDns.write(zone, Map.of(name, List.of("127.0.0.3")));
            await().atMost(Duration.ofSeconds(5)).until(() -> "absent".equals(state(id, first.name())));
            int before = first.chats.get();
            assertEquals(List.of(), load(4, 20, n -> chat(id, "dns " + n), user.key()));
            assertEquals(before, first.chats.get(), "the address gone takes no new request");
        } finally {
            TestDns.write(zone, Map.of());
            first.close();
            second.close();
        }
    }

    @Test
    void conversationsStayOnTheirReplicaWithinTheLoadBound() throws Exception {
        Account user = fixtures.user("affinity");
        List<ReplicaStub> stubs = replicas(3, 10);
        try {
            String id = model("affinity", urls(stubs.toArray(ReplicaStub[]::new)),
                    Map.of("routing", "prefix-affinity"));
            ConcurrentLinkedQueue<Integer> conversations = new ConcurrentLinkedQueue<>();
            for (int i = 0; i < 100; i++) {
                conversations.add(i);
            }
            Map<String, List<String>> served = new ConcurrentHashMap<>();
            List<String> failures = new CopyOnWriteArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(32);
            for (int t = 0; t < 32; t++) {
                pool.execute(() -> {
                    for (Integer n = conversations.poll(); n != null; n = conversations.poll()) {
                        List<Map<String, Object>> messages = new ArrayList<>();
                        messages.add(Map.of("role", "system", "content", "You are a careful agent. Answer briefly."));
                        String opening = "Conversation " + n + ": plan a trip to city number " + n;
                        for (int turn = 0; turn < 5; turn++) {
                            messages.add(Map.of("role", "user", "content", turn == 0 ? opening : "And then " + turn));
                            HttpResponse<String> response = send(user.key(),
                                    Map.of("model", id, "messages", new ArrayList<>(messages)));
                            if (!succeeded(response)) {
                                failures.add(response.body());
                                continue;
                            }
                            String answer = new JsonObject(response.body()).getJsonArray("choices").getJsonObject(0)
                                    .getJsonObject("message").getString("content");
                            served.computeIfAbsent(opening, k -> new CopyOnWriteArrayList<>()).add(answer);
                            messages.add(Map.of("role", "assistant", "content", answer));
                        }
                    }
                });
            }
            pool.shutdown();
            assertTrue(pool.awaitTermination(2, TimeUnit.MINUTES));
            assertEquals(List.of(), failures);
            int later = 0;
            int stayed = 0;
            for (List<String> answers : served.values()) {
                for (String answer : answers.subList(1, answers.size())) {
                    later++;
                    stayed += answer.equals(answers.get(0)) ? 1 : 0;
                }
            }
            assertEquals(400, later);
            System.out.printf("Prefix affinity: %d of %d later turns stayed; requests per replica %s%n", stayed, later,
                    stubs.stream().map(stub -> stub.chats.get()).toList());
            assertTrue(stayed >= 0.95 * later, stayed + " of " + later + " later turns on their first turn's replica; "
                    + stubs.stream().map(stub -> stub.chats.get()).toList());
            double mean = 500 / 3.0;
            for (ReplicaStub stub : stubs) {
                assertTrue(stub.chats.get() <= 1.3 * mean, stub.name() + " took " + stub.chats.get() + " of 500");
            }
        } finally {
            stubs.forEach(ReplicaStub::close);
        }
    }

    @Test
    void aHotPrefixSpillsOverToTheNextReplicas() {
        Account user = fixtures.user("hot");
        List<ReplicaStub> stubs = replicas(3, 20);
        try {
            String id = model("hot", urls(stubs.toArray(ReplicaStub[]::new)), Map.of("routing", "prefix-affinity"));
            // every request has the same key: one agent's system prompt and task
            Map<String, Object> request = Map.of("model", id, "messages",
                    List.of(Map.of("role", "system", "content", "You are the agent."),
                            Map.of("role", "user", "content", "Do the task.")));
            assertEquals(List.of(), load(32, 600, n -> request, user.key()));
            List<Integer> taken = stubs.stream().map(stub -> stub.chats.get()).toList();
            System.out.printf("Hot prefix: requests per replica %s%n", taken);
            assertTrue(taken.stream().allMatch(n -> n > 0), "every replica took some: " + taken);
            assertTrue(taken.stream().allMatch(n -> n <= 0.6 * 600), "none took most: " + taken);
        } finally {
            stubs.forEach(ReplicaStub::close);
        }
    }

    @Test
    void theReplicasAreInTheContractAndTheirSettingsAreChecked() {
        ReplicaStub stub = new ReplicaStub("127.0.0.1", 0);
        try {
            String id = model("settings", List.of(stub.baseUrl() + "#weight=3"), Map.of());
            asAdmin().get("/api/v1/admin/models/{id}", id).then().statusCode(200)
                    .body("base_url", equalTo(stub.baseUrl()))
                    .body("base_urls[0]", equalTo(stub.baseUrl() + "#weight=3"))
                    .body("routing", equalTo("least-outstanding")).body("replicas[0].name", equalTo(stub.name()))
                    .body("replicas[0].weight", equalTo(3)).body("replicas[0].state", equalTo("healthy"))
                    .body("replicas[0].in_flight", equalTo(0));
            String base = new JsonObject().put("id", Fixtures.unique("replicas/bad"))
                    .put("backend", "openai-compatible").encode();
            for (Map.Entry<String, Object> bad : Map.<String, Object> of("base_urls",
                    new JsonArray().add(stub.baseUrl()).add(stub.baseUrl() + "#weight=2"), "fallbacks",
                    new JsonArray().add("no-such-model")).entrySet()) {
                JsonObject body = new JsonObject(base).put("base_urls", new JsonArray().add(stub.baseUrl()));
                body.put(bad.getKey(), bad.getValue());
                asAdmin().body(body.encode()).post("/api/v1/admin/models").then().statusCode(422)
                        .body("errors[0].field", equalTo(bad.getKey()));
            }
            JsonObject both = new JsonObject(base).put("base_url", stub.baseUrl()).put("base_urls",
                    new JsonArray().add(stub.baseUrl()));
            asAdmin().body(both.encode()).post("/api/v1/admin/models").then().statusCode(422);
            JsonObject itself = new JsonObject(base).put("base_url", stub.baseUrl()).put("fallbacks",
                    new JsonArray().add(new JsonObject(base).getString("id")));
            asAdmin().body(itself.encode()).post("/api/v1/admin/models").then().statusCode(422);
        } finally {
            stub.close();
        }
    }
}
