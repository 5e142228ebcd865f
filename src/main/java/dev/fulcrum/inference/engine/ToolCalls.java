package dev.fulcrum.inference.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.platform.JsonSchemas;

/** The tool calls in a local model's answer, as OpenAI returns them. */
final class ToolCalls {

    /** A tool call in the markup of Hermes-style chat templates (Qwen 2.5, Hermes, the tiny test model). */
    private static final Pattern TOOL_CALL = Pattern.compile("<tool_call>(.*?)</tool_call>", Pattern.DOTALL);

    private ToolCalls() {
    }

    /** An answer: text, or calls (then {@code finishReason} {@code tool_calls}), and its tokens. */
    record Answer(String text, JsonArray toolCalls, String finishReason, int completionTokens) {
    }

    /** A call's name, complete, in a forced call's JSON however far it was written. */
    private static final Pattern NAME = Pattern.compile("^\\s*\\{\\s*\"name\"\\s*:\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
    /** Where a forced call's arguments start. */
    private static final Pattern ARGUMENTS = Pattern.compile("\"arguments\"\\s*:\\s*");

    static JsonObject toolCall(String name, JsonObject arguments) {
        return toolCall(name, arguments.encode());
    }

    /** A call whose arguments are {@code arguments} as written (a cut call's are part of a JSON object). */
    static JsonObject toolCall(String name, String arguments) {
        return new JsonObject().put("id", "call_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24))
                .put("type", "function")
                .put("function", new JsonObject().put("name", name).put("arguments", arguments));
    }

    /** The names a forced call's schema ({@link ChatPrompt#answerSchema}) allows: one, or those of its anyOf. */
    static List<String> forcedNames(JsonObject schema) {
        List<String> names = new ArrayList<>();
        JsonArray options = schema.getJsonArray("anyOf", new JsonArray().add(schema));
        for (Object option : options) {
            names.add(((JsonObject) option).getJsonObject("properties").getJsonObject("name").getString("const"));
        }
        return names;
    }

    /**
     * A forced call that ended before its JSON did ({@code max_tokens}, a stop string), answered as OpenAI answers a
     * cut call: the call with the arguments written so far (not a JSON object yet), never the call's JSON as content.
     * The name is the one written, or the only one the call could have; with neither, no call.
     */
    static Answer cutCall(String text, List<String> names, String finishReason, int tokens) {
        Matcher name = NAME.matcher(text);
        String function = name.find() && names.contains(name.group(1)) ? name.group(1)
                : names.size() == 1 ? names.get(0) : null;
        if (function == null) {
            return new Answer(null, null, finishReason, tokens);
        }
        Matcher arguments = ARGUMENTS.matcher(text);
        String written = arguments.find() ? text.substring(arguments.end()) : "";
        return new Answer(null, new JsonArray().add(toolCall(function, written)), finishReason, tokens);
    }

    /**
     * The tool calls of a free answer ({@code tool_choice} auto), in the markup chat templates teach models:
     * Hermes-style {@code <tool_call>{"name": ..., "arguments": {...}}</tool_call>} blocks (Qwen 2.5, Hermes, the tiny
     * test model), the text around them being the message's content; or an answer that is only such an object (Llama
     * 3.x's JSON calls, {@code "parameters"} standing for {@code "arguments"}). A call must name one of the tools and
     * carry an object of arguments (or a string holding one) that matches the tool's parameters schema
     * ({@link SchemaMatch}: no grammar constrained them); if any block is not such a call, the answer stays text. Null
     * when the answer holds no call.
     */
    static Answer toolCalls(String text, JsonArray tools, int tokens) {
        Map<String, JsonObject> names = new HashMap<>();
        for (Object tool : tools) {
            JsonObject function = ((JsonObject) tool).getJsonObject("function");
            names.put(function.getString("name"), function.getJsonObject("parameters"));
        }
        List<JsonObject> calls = new ArrayList<>();
        Matcher blocks = TOOL_CALL.matcher(text);
        StringBuilder content = new StringBuilder();
        int at = 0;
        while (blocks.find()) {
            JsonObject call = call(blocks.group(1), names);
            if (call == null) {
                return null;
            }
            calls.add(call);
            content.append(text, at, blocks.start());
            at = blocks.end();
        }
        content.append(text.substring(at));
        if (calls.isEmpty()) {
            JsonObject call = text.strip().startsWith("{") ? call(text, names) : null;
            if (call == null) {
                return null;
            }
            calls.add(call);
            content.setLength(0);
        }
        JsonArray out = new JsonArray();
        calls.forEach(out::add);
        String rest = content.toString().strip();
        return new Answer(rest.isEmpty() ? null : rest, out, "tool_calls", tokens);
    }

    private static JsonObject call(String json, Map<String, JsonObject> names) {
        JsonObject call;
        try {
            call = new JsonObject(json.strip());
        } catch (DecodeException | ClassCastException e) {
            return null;
        }
        Object name = call.getValue("name");
        Object arguments = call.containsKey("arguments") ? call.getValue("arguments") : call.getValue("parameters");
        if (arguments instanceof String encoded) {
            try {
                arguments = new JsonObject(encoded);
            } catch (DecodeException | ClassCastException e) {
                return null;
            }
        }
        if (!(name instanceof String function) || !names.containsKey(function)
                || !(arguments instanceof JsonObject object) || !matches(object, names.get(function))) {
            return null;
        }
        return toolCall(function, object);
    }

    /** Whether arguments match a function's parameters (a function without them takes any). */
    private static boolean matches(JsonObject arguments, JsonObject parameters) {
        return parameters == null || JsonSchemas.matches(arguments.encode(), parameters.encode());
    }
}
