package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;

import io.vertx.core.json.JsonArray;

/**
 * Hermes 2 Pro's calls, which Qwen 2.5, Qwen 3, Hermes 3 and the suite's tiny model also write:
 * {@code <tool_call>{"name": ..., "arguments": {...}}</tool_call>} blocks after the answer's text, one per call. Qwen 3
 * reasons first between {@code <think>} and {@code </think>}.
 */
final class HermesFormat extends MarkupFormat {

    static final String START = "<tool_call>";
    static final String END = "</tool_call>";

    HermesFormat(String name, ThinkTags think) {
        super(name, think);
    }

    @Override
    public List<String> printed() {
        List<String> printed = new ArrayList<>(super.printed());
        printed.addAll(List.of(START, END));
        return printed;
    }

    @Override
    List<String> callStarts() {
        return List.of(START);
    }

    @Override
    public Constraint calls(JsonArray tools, boolean forced, boolean parallel, Grammars grammars) {
        String call = grammars.rules("tool-call", Gbnf.callSchema(tools));
        if (call == null) {
            return null;
        }
        String grammar = call + "\nblock ::= " + Gbnf.literal(START) + " [ \\n]? tool-call [ \\n]? " + Gbnf.literal(END)
                + "\nroot ::= " + Gbnf.repeated("block", parallel) + "\n";
        return new Constraint(grammar, forced ? List.of() : List.of(START));
    }

    @Override
    Calls readCalls(String text, int at, boolean partial) {
        List<Call> calls = new ArrayList<>();
        int done = at;
        while (true) {
            int i = JsonScan.skipSpace(text, done);
            if (!text.startsWith(START, i)) {
                return new Calls(calls, done);
            }
            JsonCalls.Read read = JsonCalls.object(text, i + START.length(), JsonCalls.Keys.OPENAI);
            if (read == null) {
                return new Calls(calls, done);
            }
            if (read.end() < 0) {
                calls.add(read.call());
                return new Calls(calls, -1);
            }
            i = JsonScan.skipSpace(text, read.end());
            if (!text.startsWith(END, i)) {
                if (Markers.startsOrBegins(text, i, END)) { // cut or still being written
                    calls.add(read.call());
                    return new Calls(calls, -1);
                }
                return new Calls(calls, done);
            }
            calls.add(read.call());
            done = i + END.length();
        }
    }
}
