package dev.fulcrum.inference.engine;

import java.util.HashSet;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.InferenceFailure;

/**
 * A chat request as local engines take it: the messages and tools in the one shape chat templates expect (a role,
 * string content, tool calls with their arguments as a string), how tools may be used, and the JSON schema the answer
 * must match, if any.
 *
 * @param messages
 *            each {@code {"role", "content"}} ({@code developer} read as {@code system}, the deprecated
 *            {@code function} as {@code tool} with its {@code name}), with {@code tool_calls} (an assistant's
 *            deprecated {@code function_call} as one) and {@code tool_call_id} where the request had them
 * @param tools
 *            {@code {"type": "function", "function": {"name", "description", "parameters"}}} each, or null
 * @param toolMode
 *            whether the answer may ({@code AUTO}) or must ({@code FORCED}) be tool calls
 * @param answerSchema
 *            the schema of a forced call ({@code {"name", "arguments"}}) or of {@code response_format}, or null
 * @param schemaParam
 *            the field that set {@code answerSchema}: {@code tools} or {@code response_format}
 * @param parallel
 *            whether an answer may call several tools ({@code parallel_tool_calls} true; one call unless asked, as
 *            llama-server answers)
 */
public record ChatPrompt(JsonArray messages, JsonArray tools, ToolMode toolMode, JsonObject answerSchema,
        String schemaParam, boolean parallel) {

    public enum ToolMode {
        NONE, AUTO, FORCED
    }

    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant");

    /**
     * Reads the request's messages, tools, {@code tool_choice} and {@code response_format}; refuses what the engine's
     * {@code fields} do not honour by name, and what is malformed with 400 naming the field.
     */
    public static ChatPrompt of(ChatRequest request, ChatFields fields, String modelId) {
        JsonArray tools = tools(request, fields, modelId);
        JsonNode choice = request.body().get("tool_choice");
        String mode = choice == null || choice.isNull() ? (tools == null ? "none" : "auto")
                : choice.isTextual() ? choice.asText() : "function";
        if (!fields.tools() && !"none".equals(mode)) {
            throw InferenceFailure.unsupported("tool_choice", modelId);
        }
        JsonArray messages = messages(request, fields, modelId);
        JsonNode parallelCalls = request.body().get("parallel_tool_calls");
        // as llama-server: one call per answer unless asked for more (a small model repeats its call otherwise)
        boolean parallel = parallelCalls != null && parallelCalls.asBoolean(false);
        switch (mode) {
            case "none":
                break;
            case "auto":
                if (tools == null) {
                    throw InferenceFailure.invalid("tool_choice", "'tool_choice' requires 'tools'");
                }
                return new ChatPrompt(messages, tools, ToolMode.AUTO, responseSchema(request, fields, modelId),
                        "response_format", parallel);
            case "required":
            case "function":
                if (tools == null) {
                    throw InferenceFailure.invalid("tool_choice", "'tool_choice' requires 'tools'");
                }
                String name = "function".equals(mode) ? choice.path("function").path("name").asText(null) : null;
                if ("function".equals(mode) && (!"function".equals(choice.path("type").asText()) || name == null)) {
                    throw InferenceFailure.invalid("tool_choice",
                            "'tool_choice' must be 'none', 'required' or {\"type\": \"function\", \"function\": "
                                    + "{\"name\": ...}}");
                }
                JsonArray calls = new JsonArray();
                for (Object tool : tools) {
                    JsonObject function = ((JsonObject) tool).getJsonObject("function");
                    if (name == null || name.equals(function.getString("name"))) {
                        calls.add(callSchema(function));
                    }
                }
                if (calls.isEmpty()) {
                    throw InferenceFailure.invalid("tool_choice", "No tool is named '" + name + "'");
                }
                if (responseSchema(request, fields, modelId) != null) {
                    throw InferenceFailure.invalid("response_format",
                            "'response_format' cannot be combined with a forced tool call");
                }
                return new ChatPrompt(messages, tools, ToolMode.FORCED,
                        calls.size() == 1 ? calls.getJsonObject(0) : new JsonObject().put("anyOf", calls), "tools",
                        parallel);
            default:
                throw InferenceFailure.invalid("tool_choice", "'tool_choice' must be 'none', 'auto', 'required' or "
                        + "{\"type\": \"function\", \"function\": {\"name\": ...}}");
        }
        return new ChatPrompt(messages, tools, ToolMode.NONE, responseSchema(request, fields, modelId),
                "response_format", parallel);
    }

    /** The messages: a role, string content, tool calls with string arguments. */
    private static JsonArray messages(ChatRequest request, ChatFields fields, String modelId) {
        JsonArray messages = new JsonArray();
        for (int i = 0; i < request.messages().size(); i++) {
            JsonNode message = request.messages().get(i);
            String at = "messages[" + i + "]";
            String role = message.path("role").asText();
            // the deprecated function role is a tool's answer under another name
            boolean tool = "tool".equals(role) || "function".equals(role);
            if (!ROLES.contains(role) && !(fields.tools() && tool)) {
                throw InferenceFailure.unsupported(at + ".role", modelId);
            }
            JsonObject out = new JsonObject().put("role", "developer".equals(role) ? "system" : tool ? "tool" : role)
                    .put("content", text(message.get("content"), at + ".content", modelId));
            if ("function".equals(role) && message.path("name").isTextual()) {
                out.put("name", message.path("name").asText());
            }
            JsonNode calls = message.get("tool_calls");
            if (calls != null && !calls.isNull() && "assistant".equals(role) && fields.tools()) {
                out.put("tool_calls", toolCalls(calls, at));
            }
            JsonNode call = message.get("function_call");
            if (call != null && call.isObject() && !out.containsKey("tool_calls") && "assistant".equals(role)
                    && fields.tools()) {
                // the deprecated single call, as the one tool call it is
                ObjectNode single = JsonNodeFactory.instance.objectNode().put("type", "function");
                single.set("function", call);
                out.put("tool_calls", toolCalls(JsonNodeFactory.instance.arrayNode().add(single), at));
            }
            if ("assistant".equals(role) && message.path("reasoning_content").isTextual()) {
                out.put("reasoning_content", message.path("reasoning_content").asText());
            }
            if ("tool".equals(role) && message.path("tool_call_id").isTextual()) {
                out.put("tool_call_id", message.path("tool_call_id").asText());
            }
            messages.add(out);
        }
        return messages;
    }

    private static JsonArray toolCalls(JsonNode calls, String at) {
        if (!calls.isArray()) {
            throw InferenceFailure.invalid(at + ".tool_calls", "'" + at + ".tool_calls' must be an array");
        }
        JsonArray toolCalls = new JsonArray();
        for (JsonNode call : calls) {
            JsonNode function = call.path("function");
            if (!function.path("name").isTextual()) {
                throw InferenceFailure.invalid(at + ".tool_calls", "Each tool call needs 'function.name' as a string");
            }
            JsonNode arguments = function.get("arguments");
            toolCalls
                    .add(new JsonObject().put("id", call.path("id").asText("call")).put("type", "function")
                            .put("function", new JsonObject().put("name", function.path("name").asText())
                                    .put("arguments", arguments == null || arguments.isNull() ? "{}"
                                            : arguments.isTextual() ? arguments.asText() : arguments.toString())));
        }
        return toolCalls;
    }

    /** String content, or the text of content parts; any other part is refused by name. */
    private static String text(JsonNode content, String param, String modelId) {
        if (content == null || content.isNull()) {
            return "";
        }
        if (content.isTextual()) {
            return content.asText();
        }
        StringBuilder text = new StringBuilder();
        for (JsonNode part : content) {
            if (!"text".equals(part.path("type").asText()) || !part.path("text").isTextual()) {
                throw InferenceFailure.unsupported(param, modelId);
            }
            text.append(part.path("text").asText());
        }
        return text.toString();
    }

    /** The request's tools (name, description, parameters), or null when it has none. */
    private static JsonArray tools(ChatRequest request, ChatFields fields, String modelId) {
        JsonNode tools = request.body().get("tools");
        if (tools == null || tools.isNull() || tools.isEmpty()) {
            return null;
        }
        if (!fields.tools()) {
            throw InferenceFailure.unsupported("tools", modelId);
        }
        JsonArray out = new JsonArray();
        for (int i = 0; i < tools.size(); i++) {
            JsonNode function = tools.get(i).path("function");
            String at = "tools[" + i + "]";
            if (!"function".equals(tools.get(i).path("type").asText()) || !function.path("name").isTextual()) {
                throw InferenceFailure.invalid(at,
                        "'" + at + "' must be {\"type\": \"function\", \"function\": " + "{\"name\": ...}}");
            }
            JsonNode parameters = function.get("parameters");
            if (parameters != null && !parameters.isNull() && !parameters.isObject()) {
                throw InferenceFailure.invalid(at + ".function.parameters",
                        "'parameters' must be a JSON Schema object");
            }
            out.add(new JsonObject().put("type", "function").put("function",
                    new JsonObject().put("name", function.path("name").asText())
                            .put("description", function.path("description").asText("")).put("parameters",
                                    parameters == null || parameters.isNull() ? new JsonObject().put("type", "object")
                                            : new JsonObject(parameters.toString()))));
        }
        return out;
    }

    /**
     * The schema of {@code response_format} ({@code json_object}: any object; {@code json_schema} without a
     * {@code schema}: any JSON), or null for text.
     */
    private static JsonObject responseSchema(ChatRequest request, ChatFields fields, String modelId) {
        JsonNode format = request.body().get("response_format");
        String type = format == null || format.isNull() ? "text" : format.path("type").asText();
        if (!"text".equals(type) && !fields.responseFormat()) {
            throw InferenceFailure.unsupported("response_format", modelId);
        }
        switch (type) {
            case "text":
                return null;
            case "json_object":
                return new JsonObject().put("type", "object");
            case "json_schema":
                JsonNode schema = format.path("json_schema").get("schema");
                if (schema == null || schema.isNull()) {
                    // only the name is required: without a schema the answer is any JSON
                    return new JsonObject();
                }
                if (!schema.isObject()) {
                    throw InferenceFailure.invalid("response_format.json_schema.schema",
                            "'response_format.json_schema.schema' must be a JSON Schema object");
                }
                return new JsonObject(schema.toString());
            default:
                throw InferenceFailure.invalid("response_format",
                        "'response_format.type' must be 'text', 'json_object' or 'json_schema'");
        }
    }

    /** The tools the answer may call: those a forced call's schema names, or all of them. */
    public JsonArray callable() {
        if (toolMode != ToolMode.FORCED) {
            return tools;
        }
        JsonArray options = answerSchema.getJsonArray("anyOf", new JsonArray().add(answerSchema));
        Set<String> names = new HashSet<>();
        for (Object option : options) {
            names.add(((JsonObject) option).getJsonObject("properties").getJsonObject("name").getString("const"));
        }
        JsonArray callable = new JsonArray();
        for (Object tool : tools) {
            if (names.contains(((JsonObject) tool).getJsonObject("function").getString("name"))) {
                callable.add(tool);
            }
        }
        return callable;
    }

    /** A call of {@code function} as a JSON object: its name and arguments of its parameters' schema. */
    public static JsonObject callSchema(JsonObject function) {
        return new JsonObject().put("type", "object")
                .put("properties",
                        new JsonObject().put("name", new JsonObject().put("const", function.getString("name")))
                                .put("arguments", function.getJsonObject("parameters")))
                .put("required", new JsonArray().add("name").add("arguments")).put("additionalProperties", false);
    }

}
