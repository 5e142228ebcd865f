package dev.fulcrum.inference.engine.llama;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.format.AnswerReader;
import dev.fulcrum.inference.engine.format.ChatFormat;
import dev.fulcrum.inference.engine.format.ChatFormat.Reply;
import dev.fulcrum.inference.engine.format.ReplyStream;
import dev.fulcrum.inference.engine.template.ChatTemplate;
import dev.fulcrum.support.NodeScripts;

/**
 * Every family's chat format on a GGUF file whose template is the family's (the suite's tiny model, its template
 * replaced by the family's real one from {@code chat-templates/}, written by
 * {@code src/test/python/chat_formats/family_ggufs.py}): the format is detected from the file; the prompts the file's
 * template renders equal what transformers' {@code apply_chat_template} renders ({@code fixtures.json}); and answers as
 * the family's models write them read as OpenAI's content, {@code reasoning_content} and {@code tool_calls}, finished
 * and streamed (fed one character at a time, the deltas put back together as the OpenAI SDKs do), and pass the format's
 * grammar token by token on the model's vocabulary, where a wrong tool name does not.
 */
class ChatFormatFamiliesTest {

    private static final Path WORKER = Path.of("worker").toAbsolutePath();
    private static final Path TEMPLATES = Path.of("src/test/resources/chat-templates").toAbsolutePath();
    private static final Path FAMILIES = Path.of("target", "chat-format-ggufs").toAbsolutePath();

    private static final JsonObject WEATHER_PARAMETERS = new JsonObject(
            "{\"type\": \"object\", \"properties\": {\"location\": {\"type\": \"object\", \"properties\":"
                    + " {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}},"
                    + " \"required\": [\"location\"]}");
    private static final JsonArray TOOLS = new JsonArray().add(tool("get_weather", WEATHER_PARAMETERS))
            .add(tool("brave_search", new JsonObject("{\"type\": \"object\", \"properties\": {\"query\":"
                    + " {\"type\": \"string\"}}, \"required\": [\"query\"]}")));
    private static final String ARGUMENTS = "{\"location\": {\"city\": \"Paris\"}}";

    private static LlamaEngine engine;
    private static JsonObject fixtures;

    /** A family's template, the format it must be detected as, and answers as its models write them. */
    private record Family(String template, String format, List<Answer> answers) {
    }

    /**
     * An answer and how it must read: its content, reasoning and calls ({@code name} and arguments each); with
     * {@code grammar}, it must also pass the format's grammar for {@link #TOOLS} (forced when {@code forced}).
     */
    private record Answer(String text, String content, String reasoning, List<String[]> calls, boolean grammar,
            boolean forced) {

        static Answer calls(String text, String content, String reasoning, String... nameThenArguments) {
            List<String[]> calls = new ArrayList<>();
            for (int i = 0; i < nameThenArguments.length; i += 2) {
                calls.add(new String[] { nameThenArguments[i], nameThenArguments[i + 1] });
            }
            return new Answer(text, content, reasoning, calls, true, false);
        }

        static Answer text(String text, String content, String reasoning) {
            return new Answer(text, content, reasoning, List.of(), false, false);
        }

        Answer whenForced() {
            return new Answer(text, content, reasoning, calls, grammar, true);
        }
    }

    private static List<Family> families() {
        String hermesCall = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + ARGUMENTS + "}\n</tool_call>";
        Answer hermes = Answer.calls("Let me check.\n" + hermesCall, "Let me check.", null, "get_weather", ARGUMENTS);
        Answer hermesTwo = Answer.calls(
                hermesCall + "\n<tool_call>\n{\"name\": \"brave_search\", \"arguments\": "
                        + "{\"query\": \"Paris \\\"events\\\" \\u00e9t\\u00e9\"}}\n</tool_call>",
                null, null, "get_weather", ARGUMENTS, "brave_search",
                "{\"query\": \"Paris \\\"events\\\" \\u00e9t\\u00e9\"}");
        String r1Call = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n" + ARGUMENTS
                + "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
        return List.of(
                new Family("qwen2.5.jinja", "Hermes 2 Pro / Qwen 2.5",
                        List.of(hermes, hermesTwo, hermesTwo.whenForced(),
                                Answer.text("It is sunny in Paris.", "It is sunny in Paris.", null))),
                new Family("hermes3.jinja", "Hermes 2 Pro / Qwen 2.5", List.of(hermes)),
                new Family("qwen3.jinja", "Qwen 3",
                        List.of(Answer.calls("<think>\nThe user asks for the weather.\n</think>\n\n" + hermesCall, null,
                                "The user asks for the weather.", "get_weather", ARGUMENTS),
                                Answer.text("<think>\nEasy.\n</think>\n\nParis.", "Paris.", "Easy."))),
                new Family("llama3.1.jinja", "Llama 3.x",
                        List.of(Answer.calls("{\"name\": \"get_weather\", \"parameters\": " + ARGUMENTS + "}", null,
                                null, "get_weather", ARGUMENTS),
                                Answer.calls("<|python_tag|>brave_search.call(query=\"weather in Paris\")", null, null,
                                        "brave_search", "{\"query\":\"weather in Paris\"}"))),
                new Family("mistral-nemo.jinja", "Mistral Nemo",
                        List.of(Answer.calls("[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": " + ARGUMENTS
                                + ", \"id\": \"a1B2c3D4e\"}]", null, null, "get_weather", ARGUMENTS))),
                new Family("deepseek-r1.jinja", "DeepSeek R1", List.of(
                        Answer.calls("The weather, then.\n</think>\n\n" + r1Call, null, "The weather, then.",
                                "get_weather", ARGUMENTS),
                        Answer.text("Paris is in France.\n</think>\n\nParis.", "Paris.", "Paris is in France."))),
                new Family("deepseek-v3.1.jinja", "DeepSeek V3.1",
                        List.of(Answer.calls(
                                "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>" + ARGUMENTS
                                        + "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
                                null, null, "get_weather", ARGUMENTS))),
                new Family("kimi-k2.jinja", "Kimi K2",
                        List.of(Answer.calls(
                                "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
                                        + "<|tool_call_argument_begin|>" + ARGUMENTS
                                        + "<|tool_call_end|><|tool_calls_section_end|>",
                                null, null, "get_weather", ARGUMENTS))),
                new Family("functionary-v3.1.jinja", "Functionary v3.1 (Llama 3.1)",
                        List.of(Answer.calls("<function=get_weather>" + ARGUMENTS + "</function>", null, null,
                                "get_weather", ARGUMENTS))),
                new Family("granite-3.3.jinja", "Granite",
                        List.of(Answer.calls(
                                "<|tool_call|>[{\"name\": \"get_weather\", \"arguments\": " + ARGUMENTS + "}]", null,
                                null, "get_weather", ARGUMENTS))),
                new Family("firefunction-v2.jinja", "FireFunction v2",
                        List.of(Answer.calls(
                                " functools[{\"name\": \"get_weather\", \"arguments\": " + ARGUMENTS + "}]", null, null,
                                "get_weather", ARGUMENTS))),
                new Family("functionary-v3.2.jinja", "Functionary v3.2",
                        List.of(Answer.calls("get_weather\n" + ARGUMENTS, null, null, "get_weather", ARGUMENTS),
                                Answer.text("all\nIt is sunny in Paris.", "It is sunny in Paris.", null))),
                new Family("gpt-oss.jinja", "GPT-OSS",
                        List.of(Answer.calls("<|channel|>analysis<|message|>The weather, then.<|end|><|start|>assistant"
                                + "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
                                + ARGUMENTS, null, "The weather, then.", "get_weather", ARGUMENTS),
                                Answer.text("<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>"
                                        + "final<|message|>Paris.", "Paris.", "Easy."))),
                new Family("command-r7b.jinja", "Command R7B",
                        List.of(Answer.calls(
                                "<|START_THINKING|>I will look it up.<|END_THINKING|><|START_ACTION|>"
                                        + "[{\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": "
                                        + ARGUMENTS + "}]<|END_ACTION|>",
                                null, "I will look it up.", "get_weather", ARGUMENTS),
                                Answer.text("<|START_RESPONSE|>Paris.<|END_RESPONSE|>", "Paris.", null))),
                new Family(
                        "smollm2.jinja", "generic", List.of(
                                Answer.calls("{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": " + ARGUMENTS
                                        + "}]}", null, null, "get_weather", ARGUMENTS),
                                Answer.calls("{\"response\": \"It is \\\"sunny\\\".\"}", "It is \"sunny\".", null))));
    }

    private static JsonObject tool(String name, JsonObject parameters) {
        return new JsonObject().put("type", "function").put("function",
                new JsonObject().put("name", name).put("description", "").put("parameters", parameters));
    }

    @BeforeAll
    static void familyModels() throws Exception {
        NodeScripts.run(WORKER, Duration.ofMinutes(30), Map.of(), "bash", "scripts/test-env.sh");
        Path tiny = GgufCompletionsTest.TINY_GGUF.resolve("model.gguf");
        if (!Files.exists(tiny)) {
            NodeScripts.run(WORKER, Duration.ofMinutes(5), Map.of(),
                    WORKER.resolve(".venv/bin/fulcrum-worker").toString(), "make-tiny-model",
                    GgufCompletionsTest.TINY_GGUF.toString(), "--gguf");
        }
        List<String> command = new ArrayList<>(List.of(WORKER.resolve(".venv/bin/python").toString(),
                Path.of("src/test/python/chat_formats/family_ggufs.py").toAbsolutePath().toString(), tiny.toString(),
                FAMILIES.toString()));
        for (Family family : families()) {
            command.add(TEMPLATES.resolve(family.template()).toString());
        }
        NodeScripts.run(WORKER, Duration.ofMinutes(2), Map.of(), command.toArray(String[]::new));
        engine = new LlamaEngine(Duration.ofMinutes(5), 0, 2);
        try (InputStream in = ChatFormatFamiliesTest.class.getResourceAsStream("/chat-templates/fixtures.json")) {
            fixtures = new JsonObject(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    @AfterAll
    static void close() {
        if (engine != null) {
            engine.close();
        }
    }

    @TestFactory
    Stream<DynamicTest> eachFamilyReadsAsOpenAi() {
        return families().stream().map(family -> DynamicTest
                .dynamicTest(family.format() + " (" + family.template() + ")", () -> check(family)));
    }

    private static void check(Family family) throws IOException {
        Path file = FAMILIES.resolve(family.template().replace(".jinja", ".gguf"));
        try (LlamaEngine.Lease lease = engine.lease(file.toString())) {
            LlamaModel model = lease.model();
            String source = Files.readString(TEMPLATES.resolve(family.template()));
            assertEquals(source, model.chatTemplate(), "the file holds the family's template");
            ChatTemplate template = ChatTemplate.of(model.chatTemplate(), "<s>", "</s>");
            ChatFormat format = dev.fulcrum.inference.engine.format.ChatFormats.detect(model.chatTemplate(),
                    rendering -> template.render(rendering.messages(), rendering.tools(), true));
            assertEquals(family.format(), format.name());
            rendersAsTransformers(family, model.chatTemplate());
            // the request's tools reach the prompt, through the template or the format
            ChatFormat.Rendering rendering = format.render(new dev.fulcrum.inference.engine.ChatPrompt(
                    new JsonArray().add(new JsonObject().put("role", "user").put("content", "Weather in Paris?")),
                    TOOLS, dev.fulcrum.inference.engine.ChatPrompt.ToolMode.AUTO, null, "tools", false));
            String prompt = template.render(rendering.messages(), rendering.tools(), true, rendering.variables());
            assertTrue(prompt.contains("get_weather") && prompt.contains("Weather in Paris?"), prompt);
            boolean thinking = format.think() != null && template
                    .render(new JsonArray().add(new JsonObject().put("role", "user").put("content", "Hi")), null, true)
                    .stripTrailing().endsWith(format.think().open());
            for (Answer answer : family.answers()) {
                readsAsOpenAi(format, answer, thinking);
                if (answer.grammar()) {
                    passesTheGrammar(model, format, answer);
                }
            }
        }
    }

    /** Each fixture of the family's template, rendered from the file's template, is transformers' text. */
    private static void rendersAsTransformers(Family family, String source) {
        Clock clock = Clock.fixed(LocalDateTime.parse(fixtures.getString("strftime_now")).toInstant(ZoneOffset.UTC),
                ZoneOffset.UTC);
        int checked = 0;
        for (Object item : fixtures.getJsonArray("cases")) {
            JsonObject fixture = (JsonObject) item;
            if (!family.template().equals(fixture.getString("template")) || fixture.containsKey("error")) {
                continue;
            }
            ChatTemplate template = ChatTemplate
                    .of(source, fixture.getString("bos_token"), fixture.getString("eos_token")).withClock(clock);
            assertEquals(
                    fixture.getString("expected"), template.render(fixture.getJsonArray("messages"),
                            fixture.getJsonArray("tools"), fixture.getBoolean("add_generation_prompt")),
                    fixture.getString("name"));
            checked++;
        }
        assertTrue(checked > 0 || family.template().startsWith("firefunction"), "fixtures of " + family.template());
    }

    /** The answer read finished, and streamed one character at a time, gives the same content, reasoning and calls. */
    private static void readsAsOpenAi(ChatFormat format, Answer answer, boolean thinking) {
        AnswerReader reader = new AnswerReader(format, new ChatFormat.Reading(true, true, thinking, false), true);
        Reply reply = reader.read(answer.text(), false);
        assertEquals(answer.content(), reply.content(), answer.text());
        assertEquals(answer.reasoning(), reply.reasoning(), answer.text());
        assertEquals(answer.calls().size(), reply.calls().size(), answer.text());
        for (int i = 0; i < answer.calls().size(); i++) {
            assertEquals(answer.calls().get(i)[0], reply.calls().get(i).name());
            assertEquals(new JsonObject(answer.calls().get(i)[1]), new JsonObject(reply.calls().get(i).arguments()));
            assertTrue(reply.calls().get(i).complete());
        }

        ReplyStream stream = new ReplyStream(reader);
        StringBuilder content = new StringBuilder();
        StringBuilder reasoning = new StringBuilder();
        Map<Integer, JsonObject> calls = new LinkedHashMap<>();
        List<JsonObject> deltas = new ArrayList<>();
        answer.text().codePoints().forEach(c -> deltas.addAll(stream.add(Character.toString(c))));
        boolean argumentsBeforeTheEnd = deltas.stream()
                .anyMatch(delta -> delta.containsKey("tool_calls") && delta.getJsonArray("tool_calls").getJsonObject(0)
                        .getJsonObject("function").getString("arguments", "").length() > 0);
        deltas.addAll(stream.finish(reply));
        for (JsonObject delta : deltas) {
            content.append(delta.getString("content", ""));
            reasoning.append(delta.getString("reasoning_content", ""));
            for (Object item : delta.getJsonArray("tool_calls", new JsonArray())) {
                JsonObject call = (JsonObject) item;
                JsonObject sum = calls.computeIfAbsent(call.getInteger("index"), i -> {
                    assertNotNull(call.getString("id"), "a call's first delta has its id");
                    return new JsonObject().put("id", call.getString("id"))
                            .put("name", call.getJsonObject("function").getString("name")).put("arguments", "");
                });
                sum.put("arguments",
                        sum.getString("arguments") + call.getJsonObject("function").getString("arguments", ""));
            }
        }
        assertEquals(answer.content() == null ? "" : answer.content(), content.toString(), answer.text());
        assertEquals(answer.reasoning() == null ? "" : answer.reasoning(), reasoning.toString(), answer.text());
        assertEquals(answer.calls().size(), calls.size(), answer.text());
        int i = 0;
        for (JsonObject call : calls.values()) {
            assertEquals(answer.calls().get(i)[0], call.getString("name"));
            assertEquals(new JsonObject(answer.calls().get(i)[1]), new JsonObject(call.getString("arguments")));
            i++;
        }
        if (!answer.calls().isEmpty() && answer.calls().get(0)[1].startsWith("{\"location")) {
            assertTrue(argumentsBeforeTheEnd, "arguments stream as they are written: " + answer.text());
        }
    }

    /** The answer passes the format's grammar token by token; with a tool's name changed, it does not. */
    private static void passesTheGrammar(LlamaModel model, ChatFormat format, Answer answer) {
        ChatFormat.Constraint constraint = format.calls(TOOLS, answer.forced(), true, GgufGrammars.GRAMMARS);
        assertNotNull(constraint, format.name());
        assertTrue(accepts(model, constraint, answer.text()), format.name() + " refused " + answer.text());
        if (!answer.calls().isEmpty()) {
            String wrong = answer.text().replace(answer.calls().get(0)[0], "get_wheather");
            assertFalse(accepts(model, constraint, wrong), format.name() + " took " + wrong + "\nGRAMMAR\n"
                    + constraint.grammar() + "\nTRIGGERS " + constraint.triggers());
        }
    }

    /** Whether the grammar takes every token of {@code text} (a refused token's logit is set to -inf). */
    private static boolean accepts(LlamaModel model, ChatFormat.Constraint constraint, String text) {
        Pointer chain = Sampling.of(0.0, null, null).withGrammar(constraint.grammar(), constraint.triggers())
                .chain(model);
        try {
            Memory candidate = new Memory(12);
            Memory candidates = new Memory(32);
            for (int token : model.tokenize(text, false, false)) {
                candidate.setInt(0, token);
                candidate.setFloat(4, 0f);
                candidate.setFloat(8, 0f);
                candidates.setPointer(0, candidate);
                candidates.setLong(8, 1);
                candidates.setLong(16, -1);
                candidates.setByte(24, (byte) 0);
                LlamaApi.llama_sampler_apply(chain, candidates);
                if (candidate.getFloat(4) == Float.NEGATIVE_INFINITY) {
                    return false;
                }
                LlamaApi.llama_sampler_accept(chain, token);
            }
            return true;
        } finally {
            LlamaApi.llama_sampler_free(chain);
        }
    }
}
