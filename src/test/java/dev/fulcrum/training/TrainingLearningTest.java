package dev.fulcrum.training;

import static dev.fulcrum.training.TrainingClient.as;
import static io.restassured.RestAssured.given;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.junit.QuarkusTest;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.tiny.BuiltinModel;
import dev.fulcrum.tiny.ChatTurn;
import dev.fulcrum.tiny.FinishReason;
import dev.fulcrum.tiny.Generation;
import dev.fulcrum.tiny.Sampling;

/**
 * Learning is real, through the training API: SFT teaches 20 question/answer pairs; RL on "answer contains a z" raises
 * the reward over 10 jobs of 4 groups. Each checkpoint is downloaded from its artifact version and sampled.
 */
@QuarkusTest
class TrainingLearningTest {

    static final String[][] CAPITALS = { { "France", "Paris" }, { "Japan", "Tokyo" }, { "Italy", "Rome" },
            { "Spain", "Madrid" }, { "Germany", "Berlin" }, { "Egypt", "Cairo" }, { "Peru", "Lima" },
            { "Kenya", "Nairobi" }, { "Canada", "Ottawa" }, { "Norway", "Oslo" }, { "Chile", "Santiago" },
            { "Cuba", "Havana" }, { "Greece", "Athens" }, { "Poland", "Warsaw" }, { "Russia", "Moscow" },
            { "China", "Beijing" }, { "India", "New Delhi" }, { "Iran", "Tehran" }, { "Mali", "Bamako" },
            { "Nepal", "Kathmandu" } };
    static final String[] PROMPTS = { "Say something.", "Write a word.", "Name an animal.", "Tell me a secret." };

    @Inject
    Fixtures fixtures;

    BuiltinModel checkpoint(Account account, String name, int step) throws IOException {
        byte[] weights = given().filter(Contract.ARTIFACTS).auth().oauth2(account.key()).queryParam("path", "model.bin")
                .get("/api/v1/entities/" + account.name() + "/projects/learn/artifacts/collections/" + name
                        + "/versions/step" + step + "/download")
                .then().statusCode(200).extract().asByteArray();
        return BuiltinModel.read(new ByteArrayInputStream(weights));
    }

    /** The twenty pairs as SFT data: {@code train.jsonl} in the dataset artifact {@code learn/capitals-data}. */
    static void uploadCapitals(Account user) {
        StringBuilder lines = new StringBuilder();
        for (String[] pair : CAPITALS) {
            lines.append("{\"messages\": [{\"role\": \"user\", \"content\": \"").append(question(pair[0]))
                    .append("\"}, {\"role\": \"assistant\", \"content\": \"").append(pair[1]).append("\"}]}\n");
        }
        given().filter(Contract.ARTIFACTS).auth().oauth2(user.key()).contentType("multipart/form-data")
                .multiPart("file", "train.jsonl", lines.toString().getBytes(StandardCharsets.UTF_8),
                        "application/jsonl")
                .multiPart("type", "dataset").post("/api/v1/entities/" + user.name()
                        + "/projects/learn/artifacts/collections/capitals-data/versions")
                .then().statusCode(201);
    }

    static String question(String country) {
        return "What is the capital of " + country + "?";
    }

    @Test
    void sftLearnsTwentyPairsToNinetyPercentExactMatch() throws IOException {
        Account user = fixtures.user("sft");
        String model = TrainingClient.register(user, user.name(), "learn", "capitals", "fulcrum-tiny");
        uploadCapitals(user);
        long start = System.nanoTime();
        String job = as(user)
                .body(Map.of("model_id", model, "training_data_url",
                        "wandb-artifact:///" + user.name() + "/learn/capitals-data:latest", "config",
                        Map.of("learning_rate", 3e-3, "batch_size", 4, "epochs", 60)))
                .post("/v1/preview/sft-training-jobs").then().statusCode(202).extract().path("id");
        List<Map<String, Object>> events = TrainingClient.events(user, job, Duration.ofMinutes(3));
        double seconds = (System.nanoTime() - start) / 1e9;
        assertEquals("training_ended", events.get(events.size() - 1).get("type"),
                events.get(events.size() - 1).toString());
        List<Double> losses = events.stream().filter(e -> e.get("type").equals("gradient_step"))
                .map(e -> ((Number) ((Map<?, ?>) e.get("data")).get("loss")).doubleValue()).toList();
        StringBuilder curve = new StringBuilder();
        for (int epoch = 0; epoch < 60; epoch += 5) {
            double sum = 0;
            for (int s = epoch * 5; s < epoch * 5 + 5; s++) {
                sum += losses.get(s);
            }
            curve.append(String.format(" %d:%.3f", epoch + 1, sum / 5));
        }
        BuiltinModel trained = checkpoint(user, "capitals", 1);
        int correct = 0;
        for (String[] pair : CAPITALS) {
            Generation answer = trained.generate(List.of(new ChatTurn("user", question(pair[0]))), Sampling.greedy(32),
                    null);
            if (answer.text().equals(pair[1]) && answer.finishReason() == FinishReason.STOP) {
                correct++;
            }
        }
        System.out.printf("API SFT: %d gradient steps, job done in %.1f s, greedy exact match %d/20%n"
                + "API SFT mean loss per epoch:%s%n", losses.size(), seconds, correct, curve);
        assertEquals(300, losses.size());
        assertTrue(correct >= 18, "only " + correct + " of 20 exactly right");
        assertTrue(seconds < 120, "took " + seconds + " s");
    }

    @Test
    void rlRaisesTheRewardOverTenJobsOfFourGroups() throws IOException {
        Account user = fixtures.user("rl");
        String model = TrainingClient.register(user, user.name(), "learn", "zeds", "fulcrum-tiny");
        int jobs = 10;
        int groupSize = 8;
        double[] meanReward = new double[jobs];
        List<String> steps = new ArrayList<>();
        long start = System.nanoTime();
        for (int job = 0; job < jobs; job++) {
            BuiltinModel current = checkpoint(user, "zeds", job);
            List<Map<String, Object>> groups = new ArrayList<>();
            double sum = 0;
            for (int p = 0; p < PROMPTS.length; p++) {
                List<Map<String, Object>> trajectories = new ArrayList<>();
                for (int i = 0; i < groupSize; i++) {
                    long seed = job * 1000L + p * 100L + i;
                    String text = current.generate(List.of(new ChatTurn("user", PROMPTS[p])),
                            new Sampling(1.0, 1.0, 16, List.of(), seed), null).text();
                    double reward = text.indexOf('z') >= 0 ? 1.0 : 0.0;
                    sum += reward;
                    trajectories.add(TrainingClient.trajectory(PROMPTS[p], text, reward));
                }
                groups.add(Map.of("trajectories", trajectories));
            }
            meanReward[job] = sum / (PROMPTS.length * groupSize);
            String id = as(user)
                    .body(Map.of("model_id", model, "trajectory_groups", groups, "experimental_config",
                            Map.of("learning_rate", 3e-3)))
                    .post("/v1/preview/training-jobs").then().statusCode(202).extract().path("id");
            List<Map<String, Object>> events = TrainingClient.events(user, id, Duration.ofMinutes(1));
            assertEquals("training_ended", events.get(events.size() - 1).get("type"), events.toString());
            int currentJob = job + 1;
            events.stream().filter(e -> e.get("type").equals("gradient_step")).forEach(e -> {
                Map<?, ?> m = (Map<?, ?>) e.get("data");
                steps.add(String.format("  job %d: loss %.4f reward %.3f reward_std_dev %.3f grad_norm %.3f",
                        currentJob, ((Number) m.get("loss")).doubleValue(), ((Number) m.get("reward")).doubleValue(),
                        ((Number) m.get("reward_std_dev")).doubleValue(), ((Number) m.get("grad_norm")).doubleValue()));
            });
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        double first = (meanReward[0] + meanReward[1]) / 2;
        double last = (meanReward[jobs - 2] + meanReward[jobs - 1]) / 2;
        StringBuilder curve = new StringBuilder();
        for (int job = 0; job < jobs; job++) {
            curve.append(String.format(" %d:%.3f", job + 1, meanReward[job]));
        }
        System.out.printf(
                "API RL: %d jobs in %.1f s; mean reward per job (sampled before its update):%s%n"
                        + "API RL first two %.3f, last two %.3f, rise %.3f%n",
                jobs, seconds, curve, first, last, last - first);
        steps.forEach(System.out::println);
        assertTrue(last - first >= 0.3, "reward rose only by " + (last - first));
        assertTrue(seconds < 120, "took " + seconds + " s");
    }
}
