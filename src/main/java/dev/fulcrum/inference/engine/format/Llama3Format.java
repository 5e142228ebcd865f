package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * Llama 3.1, 3.2 and 3.3's calls, as their template teaches them: the answer is one JSON object {@code {"name": ...,
 * "parameters": {...}}}, or after {@code <|python_tag|>} either such an object or a call of one of the built-in tools
 * ({@code brave_search.call(query="...")}, {@code wolfram_alpha}, {@code code_interpreter}) when the request has a tool
 * of that name. One call per answer (the template refuses two).
 */
final class Llama3Format extends MarkupFormat {

    static final String PYTHON_TAG = "<|python_tag|>";
    private static final List<String> STARTS = List.of("{\"name\"", "{ \"name\"", PYTHON_TAG);
    private static final Set<String> BUILTIN = Set.of("brave_search", "wolfram_alpha", "code_interpreter");
    private static final Pattern BUILTIN_CALL = Pattern.compile("([a-z_]+)\\.call\\((.*)\\)\\s*$", Pattern.DOTALL);
    private static final Pattern KEYWORD = Pattern
            .compile("(\\w+)\\s*=\\s*(\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|[^,]+)\\s*(?:,|$)");
    private static final JsonCalls.Keys KEYS = new JsonCalls.Keys("name", List.of("parameters", "arguments"), null,
            false);

    Llama3Format() {
        super("Llama 3.x", null);
    }

    @Override
    public List<String> printed() {
        return List.of(PYTHON_TAG);
    }

    @Override
    List<String> callStarts() {
        return STARTS;
    }

    @Override
    public Constraint calls(JsonArray tools, boolean forced, boolean parallel, Grammars grammars) {
        JsonArray options = new JsonArray();
        List<String> builtins = new ArrayList<>();
        for (JsonObject function : Gbnf.functions(tools)) {
            if (BUILTIN.contains(function.getString("name"))) {
                builtins.add(Gbnf.literal(function.getString("name") + ".call("));
            }
            options.add(new JsonObject().put("type", "object")
                    .put("properties",
                            new JsonObject().put("name", new JsonObject().put("const", function.getString("name")))
                                    .put("parameters", function.getJsonObject("parameters")))
                    .put("required", new JsonArray().add("name").add("parameters")).put("additionalProperties", false));
        }
        String call = grammars.rules("call",
                options.size() == 1 ? options.getJsonObject(0) : new JsonObject().put("anyOf", options));
        if (call == null) {
            return null;
        }
        String root = "root ::= " + Gbnf.literal(PYTHON_TAG) + "? call";
        if (!builtins.isEmpty()) {
            root += " | " + Gbnf.literal(PYTHON_TAG) + " (" + String.join(" | ", builtins) + ") [^\\n]*";
        }
        return new Constraint(call + "\n" + root + "\n", forced ? List.of() : STARTS);
    }

    @Override
    Calls readCalls(String text, int at, boolean partial) {
        int i = at;
        if (text.startsWith(PYTHON_TAG, at)) {
            i = JsonScan.skipSpace(text, at + PYTHON_TAG.length());
            if (i < text.length() && text.charAt(i) != '{') {
                return builtin(text, i, partial);
            }
        }
        JsonCalls.Read read = JsonCalls.object(text, i, KEYS);
        if (read == null) {
            return new Calls(List.of(), at);
        }
        return new Calls(List.of(read.call()), read.end());
    }

    /** A built-in tool's call, {@code brave_search.call(query="...")}, its keyword arguments read as JSON. */
    private static Calls builtin(String text, int at, boolean partial) {
        Matcher call = BUILTIN_CALL.matcher(text.substring(at));
        if (!call.matches()) {
            return partial ? new Calls(List.of(), -1) : new Calls(List.of(), at);
        }
        JsonObject arguments = new JsonObject();
        Matcher keyword = KEYWORD.matcher(call.group(2).strip());
        while (keyword.find()) {
            arguments.put(keyword.group(1), pythonValue(keyword.group(2).strip()));
        }
        return new Calls(List.of(new Call(call.group(1), arguments.encode(), null, !partial)),
                partial ? -1 : text.length());
    }

    private static Object pythonValue(String value) {
        if (value.startsWith("\"")) {
            String decoded = JsonScan.decode(value);
            return decoded == null ? value : decoded;
        }
        if (value.startsWith("'")) {
            return value.substring(1, value.length() - 1).replace("\\'", "'");
        }
        return switch (value) {
            case "True" -> true;
            case "False" -> false;
            case "None" -> null;
            default -> number(value);
        };
    }

    private static Object number(String value) {
        try {
            return value.contains(".") ? Double.parseDouble(value) : Long.parseLong(value);
        } catch (NumberFormatException e) {
            return value;
        }
    }
}
