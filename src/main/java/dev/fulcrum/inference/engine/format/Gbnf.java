package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiFunction;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.ChatPrompt;

/** Pieces of llama.cpp grammars (GBNF) the formats put their call markup together from. */
final class Gbnf {

    private Gbnf() {
    }

    /** A GBNF string literal of {@code text}. */
    static String literal(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> out.append(c);
            }
        }
        return out.append('"').toString();
    }

    /** Each tool's function object. */
    static List<JsonObject> functions(JsonArray tools) {
        List<JsonObject> functions = new ArrayList<>();
        for (Object tool : tools) {
            functions.add(((JsonObject) tool).getJsonObject("function"));
        }
        return functions;
    }

    /** The schema of a call of any of the tools, as a JSON object of {@link ChatPrompt#callSchema}'s shape. */
    static JsonObject callSchema(JsonArray tools) {
        JsonArray calls = new JsonArray();
        functions(tools).forEach(function -> calls.add(ChatPrompt.callSchema(function)));
        return calls.size() == 1 ? calls.getJsonObject(0) : new JsonObject().put("anyOf", calls);
    }

    /**
     * A rule {@code call} that is any one of the tools' calls, each written by {@code call} from the function's name
     * and the name of the rule of its arguments; with the arguments' rules. Null when a tool's parameters have keywords
     * the converter does not take.
     */
    static String namedCalls(JsonArray tools, ChatFormat.Grammars grammars, BiFunction<String, String, String> call) {
        StringBuilder rules = new StringBuilder();
        List<String> options = new ArrayList<>();
        List<JsonObject> functions = functions(tools);
        for (int i = 0; i < functions.size(); i++) {
            String arguments = grammars.rules("args-" + i, functions.get(i).getJsonObject("parameters"));
            if (arguments == null) {
                return null;
            }
            rules.append(arguments).append('\n');
            options.add(call.apply(functions.get(i).getString("name"), "args-" + i));
        }
        return rules.append("call ::= ").append(String.join(" | ", options)).append('\n').toString();
    }

    /** {@code rule} once, or (with {@code parallel}) one or more times with blank space between. */
    static String repeated(String rule, boolean parallel) {
        return parallel ? rule + " ([ \\n]* " + rule + ")*" : rule;
    }
}
