package dev.fulcrum.inference.engine.llama;

import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.engine.ChatPrompt;

/**
 * The grammars a GGUF model's answer is constrained by, from the JSON schema a chat request sets
 * ({@link ChatPrompt#answerSchema}: a forced tool call, {@code response_format}) or, for {@code tool_choice} auto on a
 * template that teaches Hermes-style calls, a lazy grammar of the tools' calls. Schemas are limited to the keywords
 * llama.cpp's converter handles (it runs in the bindings' JNI, which ends the process on a converter error), so any
 * other keyword is a 400 naming it before the converter sees the schema.
 */
final class GgufGrammars {

    /** JSON Schema keywords llama.cpp's converter turns into grammar without surprises; others are refused. */
    private static final Set<String> SCHEMA_KEYWORDS = Set.of("type", "properties", "required", "items", "enum",
            "const", "additionalProperties", "description", "title", "minItems", "maxItems", "minimum", "maximum",
            "minLength", "maxLength", "anyOf", "oneOf", "default", "examples");
    private static final Set<String> SCHEMA_TYPES = Set.of("object", "array", "string", "number", "integer", "boolean",
            "null");
    private static final int MAX_SCHEMA_DEPTH = 16;
    /** The converter's rule of the whitespace between JSON tokens. */
    private static final Pattern TIGHT_SPACE = Pattern.compile("(?m)^space ::= .*$");
    /** Where Hermes-style templates (Qwen 2.5, Hermes, the tiny test model) teach a tool call to start. */
    static final String TOOL_CALL_START = "<tool_call>";

    private GgufGrammars() {
    }

    /**
     * The grammar of the request's answer: its schema's ({@link ChatPrompt#answerSchema}) or, with tools the answer may
     * call and a template that teaches {@value #TOOL_CALL_START}, the lazy grammar of their calls; null for free text.
     */
    static String of(ChatRequest request, ChatPrompt prompt, String template) {
        if (prompt.answerSchema() != null) {
            // converted once for the check on the event loop and the generation
            return request.derived().get(GgufGrammars.class, () -> {
                checkSchema(prompt.answerSchema(), "tools".equals(prompt.schemaParam()) ? "tools.function.parameters"
                        : "response_format.json_schema.schema", 0);
                return toGrammar(prompt.answerSchema(), prompt.schemaParam());
            });
        }
        boolean hermes = prompt.toolMode() == ChatPrompt.ToolMode.AUTO && template != null
                && template.contains(TOOL_CALL_START);
        return hermes ? autoGrammar(prompt.tools()) : null;
    }

    /**
     * llama.cpp's grammar of a JSON schema, its whitespace between JSON tokens made tight: at most one space (the
     * converter's own rule allows up to two line breaks and twenty spaces or tabs at every place, where a small model
     * spends its tokens), so a forced call of a small model fits in a few dozen tokens.
     */
    static String toGrammar(JsonObject schema, String param) {
        LlamaNatives.require();
        String grammar;
        try {
            grammar = de.kherud.llama.LlamaModel.jsonSchemaToGrammar(schema.encode());
        } catch (RuntimeException e) {
            throw InferenceFailure.invalid(param, "The JSON schema cannot be turned into a grammar: " + e.getMessage());
        }
        return TIGHT_SPACE.matcher(grammar).replaceFirst(Matcher.quoteReplacement("space ::= | \" \""));
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
    private static String autoGrammar(JsonArray tools) {
        JsonArray calls = new JsonArray();
        for (Object tool : tools) {
            JsonObject function = ((JsonObject) tool).getJsonObject("function");
            try {
                checkSchema(function.getJsonObject("parameters"), "tools.function.parameters", 0);
            } catch (InferenceFailure e) {
                return null;
            }
            calls.add(ChatPrompt.callSchema(function));
        }
        String call = toGrammar(calls.size() == 1 ? calls.getJsonObject(0) : new JsonObject().put("anyOf", calls),
                "tools");
        return call.replaceFirst("(?m)^root ::=", "tool-call ::=") + "\nblock ::= \"" + TOOL_CALL_START
                + "\" [ \\n]? tool-call [ \\n]? \"</tool_call>\"\nroot ::= block ([ \\n]? block)*\n";
    }
}
