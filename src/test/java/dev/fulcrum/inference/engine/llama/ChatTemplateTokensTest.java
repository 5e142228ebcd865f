package dev.fulcrum.inference.engine.llama;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.template.ChatTemplate;
import dev.fulcrum.support.RealModels;

/**
 * SmolLM2's chat template, rendered by {@link ChatTemplate} from the template in its GGUF and tokenized by llama.cpp as
 * a chat prompt is, gives exactly the token ids transformers' {@code apply_chat_template(..., tokenize=True)} gives for
 * the same messages (the fixtures of {@code src/test/python/chat_templates/make_fixtures.py}).
 */
class ChatTemplateTokensTest {

    @Test
    void smolLm2PromptsAreTheTokensTransformersGives() throws Exception {
        JsonArray cases;
        try (InputStream in = ChatTemplateTokensTest.class.getResourceAsStream("/chat-templates/fixtures.json")) {
            cases = new JsonObject(new String(in.readAllBytes(), StandardCharsets.UTF_8)).getJsonArray("cases");
        }
        int compared = 0;
        try (LlamaEngine engine = new LlamaEngine(Duration.ofMinutes(5), 0, 1);
                LlamaEngine.Lease lease = engine.lease(RealModels.smolLm2().toString())) {
            LlamaModel model = lease.model();
            ChatTemplate template = ChatTemplate.of(model.chatTemplate(), model.tokenText(model.bos()),
                    model.tokenText(model.eos()));
            for (Object item : cases) {
                JsonObject fixture = (JsonObject) item;
                if (!fixture.containsKey("hf_token_ids") || fixture.getValue("hf_token_ids") == null) {
                    continue;
                }
                String rendered = template.render(fixture.getJsonArray("messages"), fixture.getJsonArray("tools"),
                        fixture.getBoolean("add_generation_prompt"));
                int[] expected = fixture.getJsonArray("hf_token_ids").stream().mapToInt(id -> (Integer) id).toArray();
                assertArrayEquals(expected, model.tokenize(rendered, true, true), fixture.getString("name"));
                compared++;
            }
        }
        assertTrue(compared >= 3, "SmolLM2 cases compared: " + compared);
    }
}
