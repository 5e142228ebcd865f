package dev.fulcrum.inference;

import java.util.List;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.llama.LlamaNatives;

/**
 * A chat request as a GGUF model takes it: the messages and tools in the one shape chat templates expect (a role,
 * string content, tool calls with their arguments), and the grammar that constrains the answer. JSON schemas are
 * limited to the keywords llama.cpp's converter handles (it runs in the bindings' JNI, which ends the process on a
 * converter error), so any other keyword is a 400 naming it before the converter sees the schema.
 */
final class GgufChatPrompt {

    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool");
    /** JSON Schema keywords llama.cpp's converter turns into grammar without surprises; others are refused. */
    private static final Set<String> SCHEMA_KEYWORDS = Set.of("type", "properties", "required", "items", "enum",
            "const", "additionalProperties", "description", "title", "minItems", "maxItems", "minimum", "maximum",
            "minLength", "maxLength", "anyOf", "oneOf", "default", "examples");
    private static final Set<String> SCHEMA_TYPES = Set.of("object", "array", "string", "number", "integer", "boolean",
            "null");
    private static final int MAX_SCHEMA_DEPTH = 16;
    /** Where Hermes-style templates (Qwen 2.5, Hermes, the tiny test model) teach a tool call to start. */
    static final String TOOL_CALL_START = "<tool_call>";

    private GgufChatPrompt() {
    }

    /** The messages as llama.cpp's parser accepts them: a role, string content, tool calls with string arguments. */
    static JsonArray messages(ChatRequest request, String modelId) {
        JsonArray messages = new JsonArray();
        for (int i = 0; i < request.messages().size(); i++) {
            JsonNode message = request.messages().get(i);
            String at = "messages[" + i + "]";
            String role = message.path("role").asText();
            if (!ROLES.contains(role)) {
                throw InferenceFailure.unsupported(at + ".role", modelId);
            }
            JsonObject out = new JsonObject().put("role", "developer".equals(role) ? "system" : role).put("content",
                    text(message.get("content"), at + ".content", modelId));
            JsonNode calls = message.get("tool_calls");
            if (calls != null && !calls.isNull() && "assistant".equals(role)) {
                if (!calls.isArray()) {
                    throw InferenceFailure.invalid(at + ".tool_calls", "'" + at + ".tool_calls' must be an array");
                }
                JsonArray toolCalls = new JsonArray();
                for (JsonNode call : calls) {
                    JsonNode function = call.path("function");
                    if (!function.path("name").isTextual()) {
                        throw InferenceFailure.invalid(at + ".tool_calls",
                                "Each tool call needs 'function.name' as a string");
                    }
                    JsonNode arguments = function.get("arguments");
                    toolCalls.add(new JsonObject().put("id", call.path("id").asText("call")).put("type", "function")
                            .put("function", new JsonObject().put("name", function.path("name").asText())
                                    .put("arguments", arguments == null || arguments.isNull() ? "{}"
                                            : arguments.isTextual() ? arguments.asText() : arguments.toString())));
                }
                out.put("tool_calls", toolCalls);
            }
            if ("tool".equals(role) && message.path("tool_call_id").isTextual()) {
                out.put("tool_call_id", message.path("tool_call_id").asText());
            }
            messages.add(out);
        }
        return messages;
    }

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

    /** The request's tools as llama.cpp's parser accepts them (name, description, parameters), or null. */
    static JsonArray tools(ChatRequest request) {
        JsonNode tools = request.body().get("tools");
        if (tools == null || tools.isNull() || tools.isEmpty()) {
            return null;
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
     * The grammar the answer is constrained by: a forced tool call ({@code tool_choice} {@code required} or a named
     * function: an object of the tool's name and its arguments' schema), a JSON object or a JSON schema
     * ({@code response_format}); null for free text. With {@code tool_choice} {@code auto} the answer is free (the
     * tools reach the model through its chat template) and {@link GgufToolCalls} reads the calls out of it.
     */
    static String grammar(ChatRequest request, String modelId) {
        JsonArray tools = tools(request);
        JsonNode choice = request.body().get("tool_choice");
        String mode = choice == null || choice.isNull() ? (tools == null ? "none" : "auto")
                : choice.isTextual() ? choice.asText() : "function";
        switch (mode) {
            case "none":
                break;
            case "auto":
                if (tools == null) {
                    throw InferenceFailure.invalid("tool_choice", "'tool_choice' requires 'tools'");
                }
                break;
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
                        checkSchema(function.getJsonObject("parameters"), "tools.function.parameters", 0);
                        calls.add(callSchema(function));
                    }
                }
                if (calls.isEmpty()) {
                    throw InferenceFailure.invalid("tool_choice", "No tool is named '" + name + "'");
                }
                if (request.has("response_format")
                        && !"text".equals(request.body().path("response_format").path("type").asText())) {
                    throw InferenceFailure.invalid("response_format",
                            "'response_format' cannot be combined with a forced tool call");
                }
                return toGrammar(calls.size() == 1 ? calls.getJsonObject(0) : new JsonObject().put("anyOf", calls),
                        "tools");
            default:
                throw InferenceFailure.invalid("tool_choice", "'tool_choice' must be 'none', 'auto', 'required' or "
                        + "{\"type\": \"function\", \"function\": {\"name\": ...}}");
        }
        JsonNode format = request.body().get("response_format");
        String type = format == null || format.isNull() ? "text" : format.path("type").asText();
        switch (type) {
            case "text":
                return null;
            case "json_object":
                return toGrammar(new JsonObject().put("type", "object"), "response_format");
            case "json_schema":
                JsonNode schema = format.path("json_schema").get("schema");
                if (schema == null || !schema.isObject()) {
                    throw InferenceFailure.invalid("response_format.json_schema.schema",
                            "'response_format.json_schema.schema' must be a JSON Schema object");
                }
                JsonObject parsed = new JsonObject(schema.toString());
                checkSchema(parsed, "response_format.json_schema.schema", 0);
                return toGrammar(parsed, "response_format");
            default:
                throw InferenceFailure.invalid("response_format",
                        "'response_format.type' must be 'text', 'json_object' or 'json_schema'");
        }
    }

    static String toGrammar(JsonObject schema, String param) {
        LlamaNatives.require();
        try {
            return de.kherud.llama.LlamaModel.jsonSchemaToGrammar(schema.encode());
        } catch (RuntimeException e) {
            throw InferenceFailure.invalid(param, "The JSON schema cannot be turned into a grammar: " + e.getMessage());
        }
    }

    /** Refuses, before llama.cpp sees it, a schema with keywords or types its converter does not handle. */
    private static void checkSchema(Object node, String param, int depth) {
        if (depth > MAX_SCHEMA_DEPTH) {
            throw InferenceFailure.invalid(param, "The JSON schema nests more than " + MAX_SCHEMA_DEPTH + " deep");
        }
        if (node instanceof Boolean) {
            return;
        }
        if (!(node instanceof JsonObject schema)) {
            throw InferenceFailure.invalid(param, "A JSON schema must be an object");
        }
        for (String key : schema.fieldNames()) {
            if (!SCHEMA_KEYWORDS.contains(key)) {
                throw InferenceFailure.invalid(param, "The JSON schema keyword '" + key + "' is not supported here; "
                        + "supported: " + String.join(", ", SCHEMA_KEYWORDS.stream().sorted().toList()));
            }
        }
        Object type = schema.getValue("type");
        List<Object> types = type instanceof JsonArray array ? array.getList()
                : type == null ? List.of() : List.of(type);
        for (Object t : types) {
            if (!(t instanceof String name) || !SCHEMA_TYPES.contains(name)) {
                throw InferenceFailure.invalid(param, "Unknown JSON schema type: " + t);
            }
        }
        for (String key : List.of("minItems", "maxItems", "minLength", "maxLength")) {
            Object value = schema.getValue(key);
            if (value != null && !(value instanceof Integer || value instanceof Long)) {
                throw InferenceFailure.invalid(param, "'" + key + "' must be an integer");
            }
        }
        if (schema.getValue("properties") instanceof JsonObject properties) {
            for (String key : properties.fieldNames()) {
                checkSchema(properties.getValue(key), param, depth + 1);
            }
        } else if (schema.containsKey("properties")) {
            throw InferenceFailure.invalid(param, "'properties' must be an object");
        }
        if (schema.containsKey("required") && !(schema.getValue("required") instanceof JsonArray required
                && required.stream().allMatch(String.class::isInstance))) {
            throw InferenceFailure.invalid(param, "'required' must be an array of strings");
        }
        if (schema.containsKey("enum") && !(schema.getValue("enum") instanceof JsonArray)) {
            throw InferenceFailure.invalid(param, "'enum' must be an array");
        }
        if (schema.containsKey("items")) {
            checkSchema(schema.getValue("items"), param, depth + 1);
        }
        if (schema.containsKey("additionalProperties")) {
            checkSchema(schema.getValue("additionalProperties"), param, depth + 1);
        }
        for (String key : List.of("anyOf", "oneOf")) {
            if (schema.containsKey(key)) {
                if (!(schema.getValue(key) instanceof JsonArray options)) {
                    throw InferenceFailure.invalid(param, "'" + key + "' must be an array");
                }
                for (Object option : options) {
                    checkSchema(option, param, depth + 1);
                }
            }
        }
    }

    /**
     * The grammar of {@code tool_choice} auto on a template that teaches Hermes-style calls: lazy, it lets the model
     * write text until {@value #TOOL_CALL_START}, and from there only {@code <tool_call>{"name": ..., "arguments":
     * ...}</tool_call>} blocks of the request's tools with arguments matching their schemas, then the end of the turn.
     * Null when a tool's schema has keywords the converter does not take: the answer is then read for calls as before,
     * and arguments that do not match leave it text.
     */
    static String autoGrammar(JsonArray tools) {
        JsonArray calls = new JsonArray();
        for (Object tool : tools) {
            JsonObject function = ((JsonObject) tool).getJsonObject("function");
            try {
                checkSchema(function.getJsonObject("parameters"), "tools.function.parameters", 0);
            } catch (InferenceFailure e) {
                return null;
            }
            calls.add(callSchema(function));
        }
        String call = toGrammar(calls.size() == 1 ? calls.getJsonObject(0) : new JsonObject().put("anyOf", calls),
                "tools");
        return call.replaceFirst("(?m)^root ::=", "tool-call ::=") + "\nblock ::= \"" + TOOL_CALL_START
                + "\" [ \\n]* tool-call [ \\n]* \"</tool_call>\"\nroot ::= block ([ \\n]* block)*\n";
    }

    /** A call of {@code function} as a JSON object: its name and arguments of its parameters' schema. */
    private static JsonObject callSchema(JsonObject function) {
        return new JsonObject().put("type", "object")
                .put("properties",
                        new JsonObject().put("name", new JsonObject().put("const", function.getString("name")))
                                .put("arguments", function.getJsonObject("parameters")))
                .put("required", new JsonArray().add("name").add("arguments")).put("additionalProperties", false);
    }
}
