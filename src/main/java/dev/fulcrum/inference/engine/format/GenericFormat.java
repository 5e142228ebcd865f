package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;

import io.vertx.core.json.DecodeException;
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
        JsonArray messages = new JsonArray();
        for (Object item : prompt.messages()) {
            JsonObject message = rendersCalls ? (JsonObject) item : asContent((JsonObject) item, messages);
            if (message != null) {
                messages.add(message);
            }
        }
        String instructions = instructions(prompt);
        JsonObject first = messages.isEmpty() ? null : messages.getJsonObject(0);
        if (first != null && "system".equals(first.getString("role"))) {
            messages.set(0, first.copy().put("content", first.getString("content") + "\n\n" + instructions));
        } else {
            messages.add(0, new JsonObject().put("role", "system").put("content", instructions));
        }
        return new Rendering(messages, rendersTools ? prompt.tools() : null);
    }

    /** What the model is told to answer, and the tools when the template does not show them. */
    private String instructions(ChatPrompt prompt) {
        StringBuilder text = new StringBuilder();
        if (!rendersTools) {
            JsonArray functions = new JsonArray();
            Gbnf.functions(prompt.tools()).forEach(functions::add);
            text.append("You can call these tools:\n").append(functions.encodePrettily()).append("\n\n");
        }
        boolean forced = prompt.toolMode() == ChatPrompt.ToolMode.FORCED;
        text.append("Answer in JSON: ").append("{\"tool_calls\": [{\"name\": <a tool's name>, \"arguments\": ")
                .append("<its arguments>}]} to call tools");
        text.append(forced ? "." : ", or {\"response\": <your answer>} to answer the user directly.");
        return text.toString();
    }

    /**
     * A message with its calls (an assistant's) or its answer to one (a tool's) as JSON in its content, for a template
     * that does not render them; a tool's answer becomes the user's turn, appended to one just before it.
     */
    private static JsonObject asContent(JsonObject message, JsonArray before) {
        JsonArray calls = message.getJsonArray("tool_calls");
        if (calls != null) {
            JsonArray written = new JsonArray();
            for (Object item : calls) {
                JsonObject function = ((JsonObject) item).getJsonObject("function");
                written.add(new JsonObject().put("name", function.getString("name")).put("arguments",
                        argumentsValue(function.getString("arguments"))));
            }
            JsonObject content = new JsonObject().put("tool_calls", written);
            String text = message.getString("content", "");
            if (!text.isEmpty()) {
                content.put("content", text);
            }
            return new JsonObject().put("role", "assistant").put("content", content.encode());
        }
        if ("tool".equals(message.getString("role"))) {
            JsonObject answer = new JsonObject().put("tool_response",
                    new JsonObject().put("tool_call_id", message.getString("tool_call_id")).put("content",
                            message.getString("content")));
            JsonObject last = before.isEmpty() ? null : before.getJsonObject(before.size() - 1);
            if (last != null && "user".equals(last.getString("role"))
                    && last.getString("content").startsWith("{\"tool_response\"")) {
                before.set(before.size() - 1,
                        last.copy().put("content", last.getString("content") + "\n" + answer.encode()));
                return null;
            }
            return new JsonObject().put("role", "user").put("content", answer.encode());
        }
        return message;
    }

    private static Object argumentsValue(String arguments) {
        try {
            return new JsonObject(arguments);
        } catch (DecodeException | ClassCastException e) {
            return arguments;
        }
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
