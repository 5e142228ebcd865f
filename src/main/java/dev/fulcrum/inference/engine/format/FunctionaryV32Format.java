package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;

import io.vertx.core.json.JsonArray;

/**
 * Functionary v3.2's answers: the prompt ends with {@code >>>} and the model names what follows, {@code all} for text
 * to the user, or a function with its JSON arguments on the next line; each further block starts with {@code >>>}. Its
 * grammar holds the whole answer (the first word decides): text, or calls.
 */
final class FunctionaryV32Format implements ChatFormat {

    private static final String NEXT = ">>>";
    private static final String TEXT = "all";

    @Override
    public String name() {
        return "Functionary v3.2";
    }

    @Override
    public Constraint calls(JsonArray tools, boolean forced, boolean parallel, Grammars grammars) {
        String calls = Gbnf.namedCalls(tools, grammars,
                (function, arguments) -> Gbnf.literal(function + "\n") + " " + arguments);
        if (calls == null) {
            return null;
        }
        String grammar = calls + "calls ::= call" + (parallel ? " (" + Gbnf.literal(NEXT) + " call)*" : "") + "\n";
        if (forced) {
            grammar += "root ::= calls\n";
        } else {
            // text without the next block's marker in it, then calls if any
            grammar += "root ::= calls | " + Gbnf.literal(TEXT + "\n") + " text (" + Gbnf.literal(NEXT)
                    + " calls)?\ntext ::= ([^>] | \">\" [^>] | \">>\" [^>])*\n";
        }
        return new Constraint(grammar, List.of());
    }

    @Override
    public Reply read(String text, Reading reading) {
        StringBuilder content = new StringBuilder();
        List<Call> calls = new ArrayList<>();
        int at = text.startsWith(NEXT) ? NEXT.length() : 0;
        while (at < text.length()) {
            int line = text.indexOf('\n', at);
            if (line < 0) {
                if (!reading.partial() && calls.isEmpty() && content.isEmpty()) {
                    content.append(text.substring(at)); // not the format: the answer is text
                }
                break;
            }
            String name = text.substring(at, line).strip();
            if (TEXT.equals(name) || !reading.calls()) {
                int next = text.indexOf(NEXT, line + 1);
                String written = text.substring(line + 1, next < 0 ? text.length() : next);
                if (next < 0 && reading.partial()) {
                    written = written.substring(0, Markers.settled(written, List.of(NEXT)));
                }
                content.append(written);
                if (next < 0) {
                    break;
                }
                at = next + NEXT.length();
                continue;
            }
            int end = JsonScan.valueEnd(text, line + 1);
            if (end == JsonScan.BROKEN) {
                break;
            }
            int start = JsonScan.skipSpace(text, line + 1);
            calls.add(
                    new Call(name, start < text.length() ? JsonCalls.arguments(text, start, end) : "", null, end >= 0));
            if (end < 0) {
                break;
            }
            int next = JsonScan.skipSpace(text, end);
            if (!text.startsWith(NEXT, next)) {
                break;
            }
            at = next + NEXT.length();
        }
        return new Reply(Markers.orNull(content.toString().strip()), null, calls);
    }
}
