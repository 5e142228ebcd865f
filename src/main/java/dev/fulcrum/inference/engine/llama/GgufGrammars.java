package dev.fulcrum.inference.engine.llama;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.engine.ChatPrompt;
import dev.fulcrum.inference.engine.format.ChatFormat;

/**
 * The grammars a GGUF model's answer is constrained by: the JSON schema of {@code response_format}, or the calls of the
 * request's tools in the model's chat format ({@link ChatFormat#calls}: whole for a forced call, lazy for
 * {@code tool_choice} auto). Schemas are limited to the keywords llama.cpp's converter handles (it runs in the
 * bindings' JNI, which ends the process on a converter error), so any other keyword is a 400 naming it before the
 * converter sees the schema.
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
    /** A rule's definition: its name at the start of a line. */
    private static final Pattern RULE = Pattern.compile("(?m)^([a-zA-Z0-9_-]+) ::=");

    private GgufGrammars() {
    }

    /** The converter's grammars of schemas, renamed to live beside others in one grammar. */
    static final ChatFormat.Grammars GRAMMARS = GgufGrammars::rules;

    /**
     * The grammar of the request's answer: a forced call's in the model's chat {@code format} (whole), the schema of
     * {@code response_format}, or for {@code tool_choice} auto the format's lazy grammar of the tools' calls (none when
     * a tool's parameters have keywords the converter does not take: the calls are then checked whole). Null for free
     * text. With {@code format} null, only checks what a forced call or {@code response_format} asks (on the event
     * loop, 400 naming the field).
     */
    static ChatFormat.Constraint of(ChatRequest request, ChatPrompt prompt, ChatFormat format) {
        if (prompt.answerSchema() != null) {
            // converted once for the check on the event loop and the generation
            String grammar = request.derived().get(GgufGrammars.class, () -> {
                checkSchema(prompt.answerSchema(), "tools".equals(prompt.schemaParam()) ? "tools.function.parameters"
                        : "response_format.json_schema.schema", 0);
                return toGrammar(prompt.answerSchema(), prompt.schemaParam());
            });
            if (prompt.toolMode() != ChatPrompt.ToolMode.FORCED) {
                return new ChatFormat.Constraint(grammar, List.of());
            }
            return format == null ? null : format.calls(prompt.callable(), true, prompt.parallel(), GRAMMARS);
        }
        if (prompt.toolMode() == ChatPrompt.ToolMode.AUTO && format != null) {
            return format.calls(prompt.tools(), false, prompt.parallel(), GRAMMARS);
        }
        return null;
    }

    /**
     * The rules of {@code schema}: its root named {@code name}, its other rules prefixed with {@code name-}; null when
     * the schema has keywords the converter does not take.
     */
    static String rules(String name, JsonObject schema) {
        try {
            checkSchema(schema, "tools.function.parameters", 0);
        } catch (InferenceFailure e) {
            return null;
        }
        String grammar = toGrammar(schema, "tools");
        Set<String> defined = new HashSet<>();
        Matcher rule = RULE.matcher(grammar);
        while (rule.find()) {
            defined.add(rule.group(1));
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < grammar.length();) {
            char c = grammar.charAt(i);
            if (c == '"' || c == '[') {
                int end = literalEnd(grammar, i, c == '"' ? '"' : ']');
                out.append(grammar, i, end);
                i = end;
            } else if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                int end = i;
                while (end < grammar.length() && (Character.isLetterOrDigit(grammar.charAt(end))
                        || grammar.charAt(end) == '-' || grammar.charAt(end) == '_')) {
                    end++;
                }
                String word = grammar.substring(i, end);
                out.append(!defined.contains(word) ? word : "root".equals(word) ? name : name + "-" + word);
                i = end;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    /** Where a GBNF literal (a string, or a character class) that starts at {@code at} ends. */
    private static int literalEnd(String grammar, int at, char close) {
        for (int i = at + 1; i < grammar.length(); i++) {
            if (grammar.charAt(i) == '\\') {
                i++;
            } else if (grammar.charAt(i) == close) {
                return i + 1;
            }
        }
        return grammar.length();
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
}
