package dev.fulcrum.inference.engine.llama;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.Inference;
import dev.fulcrum.support.Fixtures;
import dev.fulcrum.support.NodeScripts;
import dev.fulcrum.support.PythonClients;
import dev.fulcrum.support.RealModels;

/**
 * lm-evaluation-harness 0.4.13 ({@code lm-eval[api]}, pinned in {@code src/test/python/lm_eval/requirements.txt}),
 * unchanged, scores a multiple-choice task of our own ({@code src/test/python/lm_eval/tasks/fulcrum_facts}, 12
 * questions in a JSONL) against SmolLM2 served by Fulcrum's llama.cpp engine, through its {@code local-completions}
 * model: token prompts with {@code echo}, {@code logprobs} 1 and {@code max_tokens} 1, its tokenizer made from the GGUF
 * file. Every choice's log likelihood is llama.cpp's own ({@code llama_cpp_reference.json} beside the task, written by
 * bench/lm-eval.sh through llama-cpp-python 0.3.36 on the same file), and so is the accuracy.
 */
@QuarkusTest
class LmEvalTest {

    /** llama.cpp's numbers, within what another thread count or batch may change in the last bits. */
    private static final double TOLERANCE = 1e-3;

    @Inject
    Fixtures fixtures;

    @TestHTTPResource("/")
    java.net.URI base;

    @Test
    void lmEvalScoresAMultipleChoiceTaskAsLlamaCppDoes() throws Exception {
        Path gguf = RealModels.smolLm2();
        Path worker = GgufCompletionsTest.WORKER;
        Path scripts = Path.of("src", "test", "python", "lm_eval").toAbsolutePath();
        Path tokenizer = gguf.getParent().resolve("tokenizer");
        if (!Files.exists(tokenizer.resolve("tokenizer.json"))) {
            NodeScripts.run(worker, Duration.ofMinutes(30), Map.of(), "bash", "scripts/test-env.sh");
            NodeScripts.run(scripts, Duration.ofMinutes(5), Map.of(), worker.resolve(".venv/bin/python").toString(),
                    "tokenizer_from_gguf.py", gguf.toString(), tokenizer.toString());
        }
        String model = Fixtures.unique("smollm2-eval");
        Inference
                .asAdmin().body(new JsonObject().put("id", model).put("backend", "gguf")
                        .put("gguf_path", gguf.toString()).put("max_tokens", 256).encode())
                .post("/api/v1/admin/models").then().statusCode(201);
        Path summary = Files.createTempFile("lm-eval", ".json");

        String output = PythonClients.run("lm_eval/requirements.txt", "lm_eval/score.py", Duration.ofMinutes(10),
                Map.of("BASE_URL", base.resolve("/v1/completions").toString(), "MODEL", model, "OPENAI_API_KEY",
                        fixtures.user("lmeval").key(), "TOKENIZER", tokenizer.toString(), "OUT", summary.toString()));
        assertTrue(output.contains("lm-eval fulcrum_facts: acc"), output);
        JsonObject scored = new JsonObject(Files.readString(summary));
        JsonObject reference = new JsonObject(
                Files.readString(scripts.resolve("tasks/fulcrum_facts/llama_cpp_reference.json")));

        JsonArray samples = scored.getJsonArray("samples");
        JsonArray expected = reference.getJsonArray("samples");
        assertEquals(12, samples.size());
        for (int d = 0; d < samples.size(); d++) {
            JsonObject ours = samples.getJsonObject(d);
            JsonObject theirs = expected.getJsonObject(d);
            assertEquals(theirs.getJsonArray("pairs"), ours.getJsonArray("pairs"), "lm-eval asked what it always asks");
            for (int c = 0; c < 4; c++) {
                assertEquals(theirs.getJsonArray("loglikelihoods").getDouble(c),
                        ours.getJsonArray("loglikelihoods").getDouble(c), TOLERANCE,
                        "document " + d + " choice " + c + ": " + ours + " against " + theirs);
            }
        }
        assertEquals(reference.getDouble("acc"), scored.getDouble("acc"), 1e-9, "lm-eval's accuracy is llama.cpp's");
        assertTrue(scored.getDouble("acc") > 0.5, "SmolLM2 knows more than a guess: " + scored.getDouble("acc"));
    }
}
