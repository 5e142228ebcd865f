package dev.fulcrum.inference.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * How a local model's free answer ({@code tool_choice} auto) is read for tool calls: the random test model never writes
 * the markup, so the reading is checked here on answers as real models write them.
 */
class ToolCallsTest {

    static final JsonArray TOOLS = new JsonArray()
            .add(new JsonObject().put("type", "function").put("function",
                    new JsonObject().put("name", "get_weather").put("parameters", new JsonObject())))
            .add(new JsonObject().put("type", "function").put("function",
                    new JsonObject().put("name", "noop").put("parameters", new JsonObject())));

    @Test
    void hermesMarkupBecomesToolCallsAndTheRestContent() {
        ToolCalls.Answer answer = ToolCalls
                .toolCalls(
                        "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n"
                                + "</tool_call><tool_call>{\"name\": \"noop\", \"arguments\": \"{}\"}</tool_call>",
                        TOOLS, 30);
        assertEquals("tool_calls", answer.finishReason());
        assertEquals("Let me look.", answer.text());
        assertEquals(2, answer.toolCalls().size());
        JsonObject first = answer.toolCalls().getJsonObject(0);
        assertEquals("function", first.getString("type"));
        assertTrue(first.getString("id").startsWith("call_"));
        assertEquals("get_weather", first.getJsonObject("function").getString("name"));
        assertEquals(new JsonObject().put("city", "Paris"),
                new JsonObject(first.getJsonObject("function").getString("arguments")));
        assertEquals("{}", answer.toolCalls().getJsonObject(1).getJsonObject("function").getString("arguments"));
        assertEquals(30, answer.completionTokens());
    }

    @Test
    void aBareJsonCallIsACallWithNoContent() {
        ToolCalls.Answer answer = ToolCalls
                .toolCalls(" {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Lima\"}} ", TOOLS, 9);
        assertNull(answer.text());
        assertEquals("get_weather", answer.toolCalls().getJsonObject(0).getJsonObject("function").getString("name"));
    }

    @Test
    void anythingElseStaysText() {
        assertNull(ToolCalls.toolCalls("It is sunny in Paris.", TOOLS, 5));
        // an unknown tool, arguments that are no object, broken JSON, an unclosed block
        assertNull(ToolCalls.toolCalls("<tool_call>{\"name\": \"rm\", \"arguments\": {}}</tool_call>", TOOLS, 5));
        assertNull(ToolCalls.toolCalls("<tool_call>{\"name\": \"noop\", \"arguments\": 3}</tool_call>", TOOLS, 5));
        assertNull(ToolCalls.toolCalls("<tool_call>{\"name\": \"noop\", </tool_call>", TOOLS, 5));
        assertNull(ToolCalls.toolCalls("<tool_call>{\"name\": \"noop\", \"arguments\": {}}", TOOLS, 5));
        assertNull(ToolCalls.toolCalls("{\"city\": \"Paris\"}", TOOLS, 5));
        assertNull(ToolCalls.toolCalls("[1, 2]", TOOLS, 5));
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
        ToolCalls.Answer answer = ToolCalls.toolCalls(
                book("{\"city\": \"Oslo\", \"nights\": 2.0, \"room\": \"double\", \"guests\": [\"Ann\", \"Bo\"]}"),
                TYPED, 20);
        assertEquals("tool_calls", answer.finishReason());
        assertEquals("book", answer.toolCalls().getJsonObject(0).getJsonObject("function").getString("name"));
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
            assertNull(ToolCalls.toolCalls(book(arguments), TYPED, 20), arguments);
        }
    }

    @Test
    void aForcedCallCutByMaxTokensIsTheCallSoFarNeverContent() {
        JsonObject schema = new JsonObject().put("anyOf",
                new JsonArray().add(ChatPrompt.callSchema(TOOLS.getJsonObject(0).getJsonObject("function")))
                        .add(ChatPrompt.callSchema(TOOLS.getJsonObject(1).getJsonObject("function"))));
        java.util.List<String> names = ToolCalls.forcedNames(schema);
        assertEquals(java.util.List.of("get_weather", "noop"), names);

        ToolCalls.Answer cut = ToolCalls.cutCall("{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par", names,
                "length", 16);
        assertEquals("length", cut.finishReason());
        assertNull(cut.text());
        JsonObject function = cut.toolCalls().getJsonObject(0).getJsonObject("function");
        assertEquals("get_weather", function.getString("name"));
        assertEquals("{\"city\": \"Par", function.getString("arguments"));

        // cut inside the name: one tool it can be, or none to name
        ToolCalls.Answer early = ToolCalls.cutCall("{\"name\": \"get_w", java.util.List.of("get_weather"), "length", 4);
        assertEquals("get_weather", early.toolCalls().getJsonObject(0).getJsonObject("function").getString("name"));
        assertEquals("", early.toolCalls().getJsonObject(0).getJsonObject("function").getString("arguments"));
        ToolCalls.Answer unknown = ToolCalls.cutCall("{\"name\": \"get_w", names, "length", 4);
        assertNull(unknown.toolCalls());
        assertNull(unknown.text());
    }
}
