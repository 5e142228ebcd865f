package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * Calls written as one JSON array after a marker: Mistral Nemo's {@code [TOOL_CALLS][{"name", "arguments", "id"}]},
 * FireFunction v2's {@code functools[{"name", "arguments"}]}, Granite's {@code <|tool_call|>[{"name", "arguments"}]},
 * Command R7B's {@code <|START_ACTION|>[{"tool_call_id", "tool_name", "parameters"}]<|END_ACTION|>}. A family is its
 * markers before and after the array (none after for most), its call objects' keys, the schema of the id each call
 * carries (Mistral's nine letters and digits, Command R7B's numbers) if any, its think tags if any, and the tags its
 * text to the user is wrapped in (Command R7B's response block) if any.
 */
class ArrayCallsFormat extends MarkupFormat {

    private final String start;
    private final String end;
    private final JsonCalls.Keys keys;
    private final JsonObject idSchema;
    private final ThinkTags response;

    ArrayCallsFormat(String name, String start, String end, JsonCalls.Keys keys, JsonObject idSchema, ThinkTags think,
            ThinkTags response) {
        super(name, think);
        this.start = start;
        this.end = end;
        this.keys = keys;
        this.idSchema = idSchema;
        this.response = response;
    }

    @Override
    ThinkTags response() {
        return response;
    }

    @Override
    List<String> callStarts() {
        return List.of(start);
    }

    @Override
    public List<String> printed() {
        List<String> printed = new ArrayList<>(super.printed());
        printed.add(start);
        if (end != null) {
            printed.add(end);
        }
        if (response != null) {
            printed.add(response.open());
            printed.add(response.close());
        }
        return printed;
    }

    @Override
    public Constraint calls(JsonArray tools, boolean forced, boolean parallel, Grammars grammars) {
        JsonArray options = new JsonArray();
        for (JsonObject function : Gbnf.functions(tools)) {
            JsonObject properties = new JsonObject().put(keys.name(),
                    new JsonObject().put("const", function.getString("name")));
            properties.put(keys.arguments().get(0), function.getJsonObject("parameters"));
            JsonArray required = new JsonArray().add(keys.name()).add(keys.arguments().get(0));
            if (keys.id() != null && idSchema != null) {
                properties.put(keys.id(), idSchema);
                required.add(keys.id());
            }
            // the id first where the family writes it first (Command R7B), as the schema's order is the grammar's
            JsonObject ordered = new JsonObject();
            if (keys.idFirst() && idSchema != null) {
                ordered.put(keys.id(), properties.remove(keys.id()));
            }
            ordered.mergeIn(properties);
            options.add(new JsonObject().put("type", "object").put("properties", ordered).put("required", required)
                    .put("additionalProperties", false));
        }
        JsonObject items = options.size() == 1 ? options.getJsonObject(0) : new JsonObject().put("anyOf", options);
        JsonObject array = new JsonObject().put("type", "array").put("items", items).put("minItems", 1);
        if (!parallel) {
            array.put("maxItems", 1);
        }
        String calls = grammars.rules("calls", array);
        if (calls == null) {
            return null;
        }
        String root = "root ::= " + Gbnf.literal(start) + " calls" + (end == null ? "" : " " + Gbnf.literal(end));
        return new Constraint(calls + "\n" + root + "\n", forced ? List.of() : List.of(start));
    }

    @Override
    Calls readCalls(String text, int at, boolean partial) {
        List<Call> calls = new ArrayList<>();
        int after = JsonCalls.array(text, at + start.length(), keys, calls);
        if (after == JsonScan.BROKEN) {
            return new Calls(List.of(), at);
        }
        if (after == JsonScan.OPEN) {
            return new Calls(calls, -1);
        }
        if (end != null) {
            int i = JsonScan.skipSpace(text, after);
            if (text.startsWith(end, i)) {
                return new Calls(calls, i + end.length());
            }
        }
        return new Calls(calls, after);
    }
}
