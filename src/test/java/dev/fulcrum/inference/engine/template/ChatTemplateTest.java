package dev.fulcrum.inference.engine.template;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * Chat templates render exactly what Hugging Face transformers' {@code apply_chat_template(..., tokenize=False)}
 * renders: the expected texts in {@code chat-templates/fixtures.json} come from transformers itself
 * ({@code src/test/python/chat_templates/make_fixtures.py}), for SmolLM2's template (read from its GGUF), Qwen2.5's
 * with tools, Qwen3's (namespace, string methods), Llama 3.1's (indented JSON), Hermes 3's and Functionary v3.2's
 * (recursive macros over JSON schemas), Mistral Nemo's (filtered loops, raise_exception), DeepSeek R1's and V3.1's
 * (reasoning cut at {@code </think>}), Command R7B's (macros, tool results grouped with {@code break}), FireFunction
 * v2's (a filter block; it fails without the {@code functions} llama.cpp passes), Functionary v3.1's (text marked
 * {@code safe} escaping what is added to it), Granite 3.3's, GPT-OSS's (TypeScript from JSON schemas,
 * {@code strftime_now}, reasoning read from {@code thinking}), Kimi K2's, and small templates that each exercise one
 * group of Jinja2 features.
 */
class ChatTemplateTest {

    private static final JsonArray HELLO = new JsonArray()
            .add(new JsonObject().put("role", "user").put("content", "Hello"));

    @TestFactory
    Stream<DynamicTest> rendersWhatTransformersRenders() throws IOException {
        JsonObject fixtures = new JsonObject(resource("fixtures.json"));
        // the time transformers' strftime_now read when the fixtures were made
        Clock clock = Clock.fixed(LocalDateTime.parse(fixtures.getString("strftime_now")).toInstant(ZoneOffset.UTC),
                ZoneOffset.UTC);
        return fixtures.getJsonArray("cases").stream().map(JsonObject.class::cast)
                .map(fixture -> DynamicTest.dynamicTest(fixture.getString("name"), () -> check(fixture, clock)));
    }

    private static void check(JsonObject fixture, Clock clock) throws IOException {
        String source = fixture.containsKey("template") ? resource(fixture.getString("template"))
                : fixture.getString("source");
        ChatTemplate template = ChatTemplate.of(source, fixture.getString("bos_token"), fixture.getString("eos_token"))
                .withClock(clock);
        JsonArray messages = fixture.getJsonArray("messages");
        JsonArray tools = fixture.getJsonArray("tools");
        boolean generationPrompt = fixture.getBoolean("add_generation_prompt");
        if (fixture.containsKey("error")) {
            ChatTemplate.TemplateException raised = assertThrows(ChatTemplate.TemplateException.class,
                    () -> template.render(messages, tools, generationPrompt));
            if (fixture.getString("error_type").equals("TemplateError")) {
                assertEquals(fixture.getString("error"), raised.getMessage()); // raise_exception's message
            }
        } else {
            assertEquals(fixture.getString("expected"), template.render(messages, tools, generationPrompt));
        }
    }

    @Test
    void raiseExceptionSurfacesWithItsMessage() {
        ChatTemplate template = ChatTemplate.of("""
                {%- for m in messages %}
                {%- if m.role == 'user' %}{{ raise_exception('Role ' + m.role + ' is not allowed here') }}{% endif %}
                {%- endfor %}
                after""", null, null);
        ChatTemplate.TemplateException raised = assertThrows(ChatTemplate.TemplateException.class,
                () -> template.render(HELLO, null, true));
        assertEquals("Role user is not allowed here", raised.getMessage());
    }

    @Test
    void anInvalidTemplateIsRejectedWhenPrepared() {
        IllegalArgumentException unclosed = assertThrows(IllegalArgumentException.class,
                () -> ChatTemplate.of("{% for m in messages %}{{ m.content }}", null, null));
        assertTrue(unclosed.getMessage().startsWith("invalid chat template: "), unclosed.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ChatTemplate.of("{% if true %}x{% endfor %}", null, null));
        assertThrows(IllegalArgumentException.class, () -> ChatTemplate.of("{% frobnicate %}", null, null));
        assertThrows(IllegalArgumentException.class, () -> ChatTemplate.of("  ", null, null));
        IllegalArgumentException expression = assertThrows(IllegalArgumentException.class, () -> ChatTemplate
                .of("{% for m in messages %}\n{% if m.role == %}x{% endif %}{% endfor %}", null, null));
        assertTrue(expression.getMessage().startsWith("invalid chat template: line 2: "), expression.getMessage());
        assertThrows(IllegalArgumentException.class, () -> ChatTemplate.of("{{ messages[0]['content' }}", null, null));
    }

    @Test
    void aFailureWhileRenderingIsATemplateException() {
        ChatTemplate template = ChatTemplate.of("{{ messages[0].content.nosuchmethod() }}", null, null);
        assertThrows(ChatTemplate.TemplateException.class, () -> template.render(HELLO, null, false));
    }

    @Test
    void toolsAreNoneWhenAbsent() {
        ChatTemplate template = ChatTemplate.of("{% if tools is none %}none{% else %}{{ tools | length }}{% endif %}",
                null, null);
        assertEquals("none", template.render(HELLO, null, false));
        assertEquals("1", template.render(HELLO, new JsonArray().add(new JsonObject().put("type", "function")), false));
    }

    @Test
    void strftimeNowFormatsTheLocalTimeAsPythonDoes() {
        ChatTemplate template = ChatTemplate.of("{{ strftime_now('%Y') }}|{{ strftime_now('%d %b %Y') }}", null, null);
        String year = String.valueOf(LocalDateTime.now().getYear());
        assertTrue(template.render(HELLO, null, false).startsWith(year + "|"));
        Clock clock = Clock.fixed(LocalDateTime.of(2025, 8, 5, 9, 0).toInstant(ZoneOffset.UTC), ZoneOffset.UTC);
        assertEquals("2025|05 Aug 2025", template.withClock(clock).render(HELLO, null, false));
        LocalDateTime time = LocalDateTime.of(2024, 7, 6, 15, 4, 5);
        assertEquals("06 Jul 2024 6 Saturday July 03PM 15:04:05 188 %",
                TemplateExtensions.strftime(time, "%d %b %Y %-d %A %B %I%p %H:%M:%S %j %%"));
    }

    @Test
    void floatsPrintAsPythonsRepr() {
        List<Double> values = List.of(0.1, 1e-5, 1e-4, 1e16, 1e15, 123.456, 2e23, -0.0, 5e-324, 1.7976931348623157e308);
        List<String> python = List.of("0.1", "1e-05", "0.0001", "1e+16", "1000000000000000.0", "123.456", "2e+23",
                "-0.0", "5e-324", "1.7976931348623157e+308");
        for (int i = 0; i < values.size(); i++) {
            assertEquals(python.get(i), PythonJson.floatRepr(values.get(i)));
        }
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = ChatTemplateTest.class.getResourceAsStream("/chat-templates/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
