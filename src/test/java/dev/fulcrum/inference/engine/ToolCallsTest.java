package dev.fulcrum.inference.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.format.AnswerReader;
import dev.fulcrum.inference.engine.format.ChatFormat;
import dev.fulcrum.inference.engine.format.ChatFormat.Reply;
import dev.fulcrum.inference.engine.format.ChatFormats;

/**
 * How a local model's finished answer is read for tool calls when no grammar held it to the format (a tool's schema has
 * keywords llama.cpp's converter does not take): each call must name a tool and match its parameters, or the answer is
 * text; and how a forced call cut before its end is answered.
 */
class ToolCallsTest {

    static final JsonArray TOOLS = new JsonArray()
            .add(new JsonObject().put("type", "function").put("function",
                    new JsonObject().put("name", "get_weather").put("parameters", new JsonObject())))
            .add(new JsonObject().put("type", "function").put("function",
                    new JsonObject().put("name", "noop").put("parameters", new JsonObject())));

    private static final ChatFormat HERMES = ChatFormats.detect("{{ '<tool_call>' }}", rendering -> "");

    private static ChatPrompt prompt(JsonArray tools, ChatPrompt.ToolMode mode, JsonObject schema) {
        return new ChatPrompt(new JsonArray(), tools, mode, schema, "tools", true);
    }

    private static Reply unconstrained(String text, JsonArray tools) {
        AnswerReader reader = new AnswerReader(HERMES, new ChatFormat.Reading(true, true, false, false), false);
        return ToolCalls.reply(reader, text, prompt(tools, ChatPrompt.ToolMode.AUTO, null));
    }

    @Test
    void hermesMarkupBecomesToolCallsAndTheRestContent() {
        Reply reply = unconstrained(
                "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
                        + "</tool_call><tool_call>{\"name\": \"noop\", \"arguments\": \"{}\"}</tool_call>",
                TOOLS);
        assertEquals("Let me look.", reply.content());
        assertEquals(2, reply.calls().size());
        assertEquals("get_weather", reply.calls().get(0).name());
        assertEquals(new JsonObject().put("city", "Paris"), new JsonObject(reply.calls().get(0).arguments()));
        assertEquals("{}", reply.calls().get(1).arguments()); // arguments written as a string holding JSON
    }

    @Test
    void anythingElseStaysText() {
        for (String text : List.of("It is sunny in Paris.",
                // an unknown tool, arguments that are no object, broken JSON, an unclosed block
                "<tool_call>{\"name\": \"rm\", \"arguments\": {}}</tool_call>",
                "<tool_call>{\"name\": \"noop\", \"arguments\": 3}</tool_call>",
                "<tool_call>{\"name\": \"noop\", </tool_call>", "<tool_call>{\"name\": \"noop\", \"arguments\": {}",
                "{\"city\": \"Paris\"}", "[1, 2]")) {
            Reply reply = unconstrained(text, TOOLS);
            assertTrue(reply.calls().isEmpty(), text);
            assertEquals(text, reply.content());
        }
    }

    static final JsonArray TYPED = new JsonArray().add(new JsonObject().put("type", "function").put("function",
            new JsonObject().put("name", "book").put("parameters", new JsonObject(
                    "{\"type\": \"object\", \"required\": [\"city\", \"nights\"], \"additionalProperties\": false,"
                            + " \"properties\": {\"city\": {\"type\": \"string\", \"minLength\": 2},"
                            + " \"nights\": {\"type\": \"integer\", \"minimum\": 1, \"maximum\": 30},"
                            + " \"room\": {\"enum\": [\"single\", \"double\"]},"
                            + " \"guests\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"maxItems\": 2}}}"))));

    private static String book(String arguments) {
        return "<tool_call>{\"name\": \"book\", \"arguments\": " + arguments + "}</tool_call>";
    }

    @Test
    void argumentsThatMatchTheToolsSchemaMakeACall() {
        Reply reply = unconstrained(
                book("{\"city\": \"Oslo\", \"nights\": 2.0, \"room\": \"double\", \"guests\": [\"Ann\", \"Bo\"]}"),
                TYPED);
        assertEquals("book", reply.calls().get(0).name());
    }

    @Test
    void argumentsThatDoNotMatchTheToolsSchemaStayText() {
        for (String arguments : new String[] { "{\"city\": \"Oslo\"}", // a required property missing
                "{\"city\": \"Oslo\", \"nights\": \"two\"}", // a string for an integer
                "{\"city\": \"Oslo\", \"nights\": 1.5}", // not an integer
                "{\"city\": \"Oslo\", \"nights\": 31}", // above the maximum
                "{\"city\": \"O\", \"nights\": 2}", // shorter than minLength
                "{\"city\": \"Oslo\", \"nights\": 2, \"room\": \"suite\"}", // not in the enum
                "{\"city\": \"Oslo\", \"nights\": 2, \"guests\": [\"A\", \"B\", \"C\"]}", // too many items
                "{\"city\": \"Oslo\", \"nights\": 2, \"guests\": [1]}", // an item of another type
                "{\"city\": \"Oslo\", \"nights\": 2, \"pets\": true}" }) { // no additional properties
            assertTrue(unconstrained(book(arguments), TYPED).calls().isEmpty(), arguments);
        }
    }

    @Test
    void aForcedCallCutByMaxTokensIsTheCallSoFarNeverContent() {
        JsonObject both = new JsonObject().put("anyOf",
                new JsonArray().add(ChatPrompt.callSchema(TOOLS.getJsonObject(0).getJsonObject("function")))
                        .add(ChatPrompt.callSchema(TOOLS.getJsonObject(1).getJsonObject("function"))));
        AnswerReader reader = new AnswerReader(HERMES, new ChatFormat.Reading(true, true, false, false), true);

        Reply cut = ToolCalls.reply(reader, "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par",
                prompt(TOOLS, ChatPrompt.ToolMode.FORCED, both));
        assertNull(cut.content());
        assertEquals("get_weather", cut.calls().get(0).name());
        assertEquals("{\"city\": \"Par", cut.calls().get(0).arguments());

        // cut inside the name: the one tool it can be, or none to name
        JsonObject one = ChatPrompt.callSchema(TOOLS.getJsonObject(0).getJsonObject("function"));
        Reply early = ToolCalls.reply(reader, "<tool_call>{\"name\": \"get_w",
                prompt(TOOLS, ChatPrompt.ToolMode.FORCED, one));
        assertEquals("get_weather", early.calls().get(0).name());
        assertEquals("", early.calls().get(0).arguments());
        Reply unknown = ToolCalls.reply(reader, "<tool_call>{\"name\": \"get_w",
                prompt(TOOLS, ChatPrompt.ToolMode.FORCED, both));
        assertTrue(unknown.calls().isEmpty());
        assertNull(unknown.content());
    }
}
