package dev.fulcrum.worker;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.tiny.BuiltinModel;
import dev.fulcrum.tiny.BuiltinTrainer;
import dev.fulcrum.tiny.TrainerConfig;
import dev.fulcrum.tiny.TrainingTurn;
import dev.fulcrum.tiny.Trajectory;
import dev.fulcrum.tiny.TrajectoryGroup;

/**
 * A reference worker of the external worker protocol ({@code /api/v1/workers/...}, see {@code openapi/training.yaml}),
 * written against HTTP only. It trains with the built-in CPU trainer: it starts from the base checkpoint's
 * {@code model.bin} (or from the untrained built-in weights when the checkpoint is an untrained
 * {@code checkpoint.json}) and uploads {@code model.bin}. A GPU worker does the same with a real trainer and LoRA
 * adapter files.
 * <p>
 * Not part of the server: the build compiles it with the tests ({@code WorkerProtocolTest} runs it against a server).
 * To run it (see {@code examples/reference-worker/README.md}):
 *
 * <pre>
 * ./mvnw -B package -DskipTests
 * java -cp "target/test-classes:target/quarkus-app/app/*:target/quarkus-app/lib/main/*" \
 *     dev.fulcrum.worker.ReferenceWorker http://localhost:8080 $ADMIN_API_KEY worker-1 my/base-model
 * </pre>
 */
public final class ReferenceWorker {

    /** The checkpoint file of built-in weights, as the server names it. */
    private static final String WEIGHTS = "model.bin";

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final ObjectMapper json = new ObjectMapper();
    private final String baseUrl;
    private final String apiKey;
    private final String workerId;

    /** Registers the worker. */
    public ReferenceWorker(String baseUrl, String apiKey, String name, List<String> baseModels) throws IOException {
        this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
        this.apiKey = apiKey;
        JsonNode worker = send("POST", "/api/v1/workers", apiKey,
                json.createObjectNode().put("name", name).set("base_models", json.valueToTree(baseModels)), 201);
        this.workerId = worker.get("id").asText();
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 4) {
            System.err.println("usage: ReferenceWorker <base-url> <admin-api-key> <name> <base-model>...");
            System.exit(2);
        }
        ReferenceWorker worker = new ReferenceWorker(args[0], args[1], args[2], List.of(args).subList(3, args.length));
        while (!Thread.currentThread().isInterrupted()) {
            worker.runOnce(20);
        }
    }

    /** Claims one job (waiting up to {@code waitSeconds}) and runs it; the job id, or null when none came. */
    public String runOnce(int waitSeconds) throws IOException {
        HttpResponse<byte[]> claimed = request("POST", "/api/v1/workers/" + workerId + "/claim?wait=" + waitSeconds,
                apiKey, null, null);
        if (claimed.statusCode() == 204) {
            return null;
        }
        JsonNode claim = check(claimed, 200);
        String job = claim.get("job_id").asText();
        String token = claim.get("token").asText();
        String prefix = "/api/v1/workers/jobs/" + job;
        try {
            JsonNode input = send("GET", prefix + "/input", token, null, 200);
            BuiltinModel model = BuiltinModel.initial();
            for (JsonNode file : claim.get("base_checkpoint").get("files")) {
                if (file.get("path").asText().equals(WEIGHTS)) {
                    byte[] weights = check(
                            request("GET", prefix + "/base-checkpoint?path=" + WEIGHTS, token, null, null), 200, true);
                    model = BuiltinModel.read(new ByteArrayInputStream(weights));
                }
            }
            JsonNode config = input.get("config");
            TrainerConfig trainer = TrainerConfig.of(config);
            AtomicBoolean cancelled = new AtomicBoolean();
            Map<String, Double> last = new LinkedHashMap<>();
            dev.fulcrum.tiny.StepListener listener = (step, total, metrics) -> {
                last.clear();
                last.putAll(metrics);
                ObjectNode event = json.createObjectNode().put("type", "gradient_step");
                event.set("data", json.valueToTree(metrics));
                try {
                    if (send("POST", prefix + "/events", token, event, 200).get("cancel_requested").asBoolean()) {
                        cancelled.set(true);
                    }
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            };
            if (input.get("kind").asText().equals("sft")) {
                List<List<TrainingTurn>> examples = new ArrayList<>();
                for (JsonNode example : input.get("examples")) {
                    List<TrainingTurn> turns = new ArrayList<>();
                    for (JsonNode message : example.get("messages")) {
                        String role = message.get("role").asText();
                        turns.add(new TrainingTurn(role, message.get("content").asText(), role.equals("assistant")));
                    }
                    examples.add(turns);
                }
                started(prefix, token, BuiltinTrainer.sftSteps(examples, trainer));
                BuiltinTrainer.sft(model, examples, trainer, listener, cancelled::get);
            } else {
                List<TrajectoryGroup> groups = new ArrayList<>();
                for (JsonNode group : input.get("trajectory_groups")) {
                    List<Trajectory> members = new ArrayList<>();
                    for (JsonNode trajectory : group.get("trajectories")) {
                        List<TrainingTurn> turns = new ArrayList<>();
                        for (JsonNode item : trajectory.get("messages_and_choices")) {
                            boolean choice = item.has("message");
                            JsonNode message = choice ? item.get("message") : item;
                            turns.add(new TrainingTurn(message.get("role").asText(), message.path("content").asText(""),
                                    choice));
                        }
                        members.add(new Trajectory(turns, trajectory.get("reward").asDouble()));
                    }
                    groups.add(new TrajectoryGroup(members));
                }
                started(prefix, token, BuiltinTrainer.rlSteps(groups, trainer));
                BuiltinTrainer.rl(model, groups, trainer, listener, cancelled::get);
            }
            if (cancelled.get()) {
                send("POST", prefix + "/fail", token, json.createObjectNode().put("error_message", "Cancelled"), 200);
                return job;
            }
            ByteArrayOutputStream weights = new ByteArrayOutputStream();
            model.write(weights);
            check(request("PUT", prefix + "/checkpoint?path=" + WEIGHTS, token, weights.toByteArray(),
                    "application/octet-stream"), 200);
            ObjectNode finish = json.createObjectNode();
            finish.set("metrics", json.valueToTree(last));
            send("POST", prefix + "/finish", token, finish, 200);
        } catch (RuntimeException | IOException e) {
            send("POST", prefix + "/fail", token,
                    json.createObjectNode().put("error_message", "Reference worker: " + e.getMessage()), 200);
        }
        return job;
    }

    private void started(String prefix, String token, int steps) throws IOException {
        ObjectNode event = json.createObjectNode().put("type", "training_started");
        event.putObject("data").put("num_sequences", steps);
        send("POST", prefix + "/events", token, event, 200);
    }

    private JsonNode send(String method, String path, String token, JsonNode body, int expected) throws IOException {
        return check(request(method, path, token, body == null ? null : json.writeValueAsBytes(body),
                body == null ? null : "application/json"), expected);
    }

    private HttpResponse<byte[]> request(String method, String path, String token, byte[] body, String type)
            throws IOException {
        HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofSeconds(90))
                .header("Authorization", "Bearer " + token)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofByteArray(body));
        if (type != null) {
            builder.header("Content-Type", type);
        }
        try {
            return http.send(builder.build(), HttpResponse.BodyHandlers.ofByteArray());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    private JsonNode check(HttpResponse<byte[]> response, int expected) throws IOException {
        return json.readTree(check(response, expected, true));
    }

    private static byte[] check(HttpResponse<byte[]> response, int expected, boolean raw) throws IOException {
        if (response.statusCode() != expected) {
            throw new IOException(response.request().method() + " " + response.uri().getPath() + ": HTTP "
                    + response.statusCode() + " " + new String(response.body(), StandardCharsets.UTF_8));
        }
        return response.body();
    }
}
