package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.ChatPrompt;

/**
 * The format of templates that know no call markup (SmolLM2's, Gemma's, most base models'), as llama-server's "generic"
 * format does it: the answer is one JSON object, {@code {"tool_calls": [{"name", "arguments"}, ...]}} (or
 * {@code {"tool_call": {...}}} with {@code parallel_tool_calls} false) to call tools or {@code {"response": "..."}} to
 * answer, held to that shape by a grammar. A template that does not render tools is given them in a system message with
 * that shape; one that does not render past calls and tools' answers is given them as JSON in the messages' content.
 */
final class GenericFormat implements ChatFormat {

    private final boolean rendersTools;
    private final boolean rendersCalls;
    private final ThinkTags think;

    GenericFormat(boolean rendersTools, boolean rendersCalls, ThinkTags think) {
        this.rendersTools = rendersTools;
        this.rendersCalls = rendersCalls;
        this.think = think;
    }

    @Override
    public String name() {
        return "generic";
    }

    @Override
    public ThinkTags think() {
        return think;
    }

    @Override
    public Rendering render(ChatPrompt prompt) {
        if (prompt.tools() == null) {
            return ChatFormat.super.render(prompt);
        }
        JsonArray messages = rendersCalls ? prompt.messages() : ToolPolyfill.callsAsContent(prompt.messages());
        String instructions = (rendersTools ? "" : ToolPolyfill.toolList(prompt.tools()) + "\n\n")
                + instructions(prompt);
        return new Rendering(ToolPolyfill.withSystemText(messages, instructions), rendersTools ? prompt.tools() : null);
    }

    /** What the model is told to answer: the JSON of the grammar's shape. */
    private static String instructions(ChatPrompt prompt) {
        String call = "{\"name\": <a tool's name>, \"arguments\": <its arguments>}";
        String calls = prompt.parallel() ? "{\"tool_calls\": [" + call + ", ...]}" : "{\"tool_call\": " + call + "}";
        return "Answer in JSON: " + calls + (prompt.toolMode() == ChatPrompt.ToolMode.FORCED ? " to call tools."
                : " to call tools, or {\"response\": <your answer>} to answer the user directly.");
    }

    @Override
    public Constraint calls(JsonArray tools, boolean forced, boolean parallel, Grammars grammars) {
        JsonObject call = Gbnf.callSchema(tools);
        JsonObject calls = parallel
                ? object("tool_calls", new JsonObject().put("type", "array").put("items", call).put("minItems", 1))
                : object("tool_call", call);
        JsonObject schema = forced ? calls
                : new JsonObject().put("anyOf",
                        new JsonArray().add(calls).add(object("response", new JsonObject().put("type", "string"))));
        String grammar = grammars.rules("root", schema);
        return grammar == null ? null : new Constraint(grammar, List.of());
    }

    private static JsonObject object(String key, JsonObject value) {
        return new JsonObject().put("type", "object").put("properties", new JsonObject().put(key, value))
                .put("required", new JsonArray().add(key)).put("additionalProperties", false);
    }

    @Override
    public Reply read(String text, Reading reading) {
        String reasoning = null;
        String rest = text;
        if (think != null && reading.reasoning()) {
            MarkupFormat.Reasoning split = MarkupFormat.Reasoning.split(text, think, reading.thinking(),
                    reading.partial());
            reasoning = split.reasoning();
            rest = split.rest();
        }
        if (!reading.calls()) {
            return new Reply(Markers.orNull(rest), reasoning, List.of());
        }
        JsonScan.ObjectSoFar answer = JsonScan.object(rest, 0);
        if (answer == null) {
            // not the JSON asked for (no grammar held the model to it): the answer is text
            return new Reply(reading.partial() ? null : Markers.orNull(rest), reasoning, List.of());
        }
        List<Call> calls = new ArrayList<>();
        JsonScan.Field many = answer.field("tool_calls");
        JsonScan.Field one = answer.field("tool_call");
        JsonScan.Field response = answer.field("response");
        if (many != null) {
            if (JsonCalls.array(rest, many.start(), JsonCalls.Keys.OPENAI, calls) == JsonScan.BROKEN) {
                calls.clear();
            }
        } else if (one != null) {
            JsonCalls.Read read = JsonCalls.object(rest, one.start(), JsonCalls.Keys.OPENAI);
            if (read != null) {
                calls.add(read.call());
            }
        }
        String content = null;
        if (response != null) {
            content = rest.charAt(response.start()) == '"' ? JsonScan.stringSoFar(rest, response.start())
                    : reading.partial() && response.end() < 0 ? null
                            : rest.substring(response.start(), response.end() < 0 ? rest.length() : response.end());
        } else if (!reading.partial() && calls.isEmpty()) {
            content = rest;
        }
        return new Reply(Markers.orNull(content), reasoning, calls);
    }
}
