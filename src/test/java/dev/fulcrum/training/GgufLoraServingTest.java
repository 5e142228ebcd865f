package dev.fulcrum.training;

import static dev.fulcrum.training.TrainingClient.as;
import static io.restassured.RestAssured.given;
import static org.hamcrest.Matchers.anyOf;
import static org.hamcrest.Matchers.equalTo;
import static org.hamcrest.Matchers.hasItem;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;

import dev.fulcrum.support.Contract;
import dev.fulcrum.support.EmbeddedPostgresResource;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.Fixtures.Account;
import dev.fulcrum.support.LongProof;
import dev.fulcrum.support.NodeScripts;

/**
 * A laptop's loop with no Python on the serving path: the worker trains an adapter of a GGUF base model (the tiny Llama
 * of {@code make-tiny-model --gguf}, its Hugging Face files beside the GGUF), uploads it also as a GGUF LoRA adapter,
 * and Fulcrum serves {@code wandb-artifact:///...:step1} with llama.cpp, base model plus adapter: the 20 trained
 * answers come back through {@code /v1/chat/completions}.
 */
@QuarkusTest
@TestProfile(ExternalWorkers.class)
class GgufLoraServingTest {

    static final String BASE_MODEL = "fulcrum/tiny-llama-gguf";
    static final Path TINY_GGUF = Path.of("target", "fulcrum-worker", "tiny-llama-gguf").toAbsolutePath();

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    URL base;

    @BeforeAll
    static void worker() throws Exception {
        FulcrumWorkerProcess.prepare();
        if (!Files.exists(TINY_GGUF.resolve("model.gguf"))) {
            NodeScripts.run(FulcrumWorkerProcess.WORKER, Duration.ofMinutes(5), Map.of(),
                    FulcrumWorkerProcess.EXECUTABLE.toString(), "make-tiny-model", TINY_GGUF.toString(), "--gguf");
        }
    }

    @BeforeEach
    void catalog() {
        given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                .oauth2(EmbeddedPostgresResource.ADMIN_KEY)
                .body(Map.of("id", BASE_MODEL, "backend", "gguf", "gguf_path",
                        TINY_GGUF.resolve("model.gguf").toString()))
                .post("/api/v1/admin/models").then().statusCode(anyOf(equalTo(201), equalTo(409)));
    }

    @Test
    @LongProof // a worker's adapter answering what it was taught through llama.cpp: TinkerSdkTest; adapters of jobs
    // served by llama.cpp: SmolLm2TrainingTest.artTrainsSmolLm2WithRolloutsThatAskForLogprobs
    void anAdapterTrainedByTheWorkerAnswersThroughLlamaCpp() throws Exception {
        Account user = fixtures.user("ggufsft");
        String model = TrainingClient.register(user, user.name(), "learn", "capitals", BASE_MODEL);
        TrainingLearningTest.uploadCapitals(user);
        try (FulcrumWorkerProcess.Running worker = FulcrumWorkerProcess.start(base.toString(),
                EmbeddedPostgresResource.ADMIN_KEY, BASE_MODEL, "gguf-worker", "--model-path", TINY_GGUF.toString())) {
            String job = as(user)
                    .body(Map.of("model_id", model, "training_data_url",
                            "wandb-artifact:///" + user.name() + "/learn/capitals-data:latest", "config",
                            Map.of("learning_rate", 3e-3, "batch_size", 4, "epochs", 100)))
                    .post("/v1/preview/sft-training-jobs").then().statusCode(202).extract().path("id");
            List<Map<String, Object>> events = TrainingClient.events(user, job, Duration.ofMinutes(8));
            assertEquals("training_ended", events.get(events.size() - 1).get("type"),
                    events.get(events.size() - 1) + "\n" + worker.log());
        }
        given().filter(Contract.ARTIFACTS).auth().oauth2(user.key())
                .get("/api/v1/entities/" + user.name()
                        + "/projects/learn/artifacts/collections/capitals/versions/step1")
                .then().statusCode(200).body("files.path", hasItem("adapter_model.gguf"));

        String served = "wandb-artifact:///" + user.name() + "/learn/capitals:step1";
        int correct = 0;
        StringBuilder wrong = new StringBuilder();
        for (String[] pair : TrainingLearningTest.CAPITALS) {
            Map<String, Object> answer = given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth()
                    .oauth2(user.key())
                    .body(Map.of("model", served, "temperature", 0, "max_tokens", 16, "messages",
                            List.of(Map.of("role", "user", "content", FulcrumWorkerTest.question(pair[0])))))
                    .post("/v1/chat/completions").then().statusCode(200).extract().path("choices[0]");
            @SuppressWarnings("unchecked")
            String text = ((Map<String, Object>) answer.get("message")).get("content").toString();
            if (text.equals(pair[1]) && "stop".equals(answer.get("finish_reason"))) {
                correct++;
            } else {
                wrong.append(' ').append(pair[1]).append("->").append(text);
            }
        }
        System.out.printf("GGUF LoRA through llama.cpp: greedy exact match %d/20%n", correct);
        assertEquals(20, correct, "wrong:" + wrong);

        // the base model itself (step 0 of the registry is the base) still answers noise, not the capitals
        String baseAnswer = given().filter(Contract.INFERENCE).contentType(ContentType.JSON).auth().oauth2(user.key())
                .body(Map.of("model", BASE_MODEL, "temperature", 0, "max_tokens", 16, "messages",
                        List.of(Map.of("role", "user", "content",
                                FulcrumWorkerTest.question(TrainingLearningTest.CAPITALS[0][0])))))
                .post("/v1/chat/completions").then().statusCode(200).extract().path("choices[0].message.content");
        org.junit.jupiter.api.Assertions.assertNotEquals(TrainingLearningTest.CAPITALS[0][1], baseAnswer);
    }
}
