package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.vertx.core.json.JsonArray;

/**
 * Calls written as markup around the function's name followed by its arguments' JSON: DeepSeek R1's
 * {@code <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>}, DeepSeek V3.1's
 * {@code <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>}, Kimi K2's
 * {@code <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>}, Functionary v3.1's
 * {@code <function=NAME>{...}</function>}; inside a section's markers where the family has them.
 * <p>
 * A family is its section's markers (or none), the words before a call's name, the separator between the name and the
 * arguments (a pattern, with the grammar's rule of it: Kimi K2 numbers its calls there), the words that end a call, its
 * think tags if any, and whether its call ids are Kimi K2's {@code functions.NAME:index}.
 */
final class NamedCallsFormat extends MarkupFormat {

    private final String sectionStart;
    private final String sectionEnd;
    private final String callStart;
    private final Pattern separator;
    private final String separatorRule;
    private final String callEnd;
    private final boolean kimiIds;

    NamedCallsFormat(String name, String sectionStart, String sectionEnd, String callStart, Pattern separator,
            String separatorRule, String callEnd, ThinkTags think, boolean kimiIds) {
        super(name, think);
        this.sectionStart = sectionStart;
        this.sectionEnd = sectionEnd;
        this.callStart = callStart;
        this.separator = separator;
        this.separatorRule = separatorRule;
        this.callEnd = callEnd;
        this.kimiIds = kimiIds;
    }

    /** A family whose separator is a fixed word. */
    static NamedCallsFormat of(String name, String sectionStart, String sectionEnd, String callStart, String separator,
            String callEnd, ThinkTags think) {
        return new NamedCallsFormat(name, sectionStart, sectionEnd, callStart,
                Pattern.compile(Pattern.quote(separator)), Gbnf.literal(separator), callEnd, think, false);
    }

    @Override
    public List<String> printed() {
        List<String> printed = new ArrayList<>(super.printed());
        if (sectionStart != null) {
            printed.add(sectionStart);
        }
        printed.add(callStart);
        printed.add(callEnd.strip());
        if (sectionEnd != null) {
            printed.add(sectionEnd);
        }
        return printed;
    }

    @Override
    List<String> callStarts() {
        return List.of(sectionStart != null ? sectionStart : callStart);
    }

    @Override
    public Constraint calls(JsonArray tools, boolean forced, boolean parallel, Grammars grammars) {
        String calls = Gbnf.namedCalls(tools, grammars, (function, arguments) -> Gbnf.literal(callStart + function)
                + " " + separatorRule + " " + arguments + " " + Gbnf.literal(callEnd));
        if (calls == null) {
            return null;
        }
        String body = Gbnf.repeated("call", parallel);
        String root = sectionStart == null ? body
                : Gbnf.literal(sectionStart) + " " + body + " " + Gbnf.literal(sectionEnd);
        return new Constraint(calls + "root ::= " + root + "\n", forced ? List.of() : callStarts());
    }

    @Override
    Calls readCalls(String text, int at, boolean partial) {
        List<Call> calls = new ArrayList<>();
        int done = sectionStart == null ? at : at + sectionStart.length();
        while (true) {
            int i = JsonScan.skipSpace(text, done);
            if (!text.startsWith(callStart, i)) {
                return sectionEnd(text, i, calls, done);
            }
            int nameAt = i + callStart.length();
            Matcher sep = separator.matcher(text);
            if (!sep.find(nameAt)) {
                return new Calls(calls, -1); // the name is still being written
            }
            String function = text.substring(nameAt, sep.start()).strip();
            String id = kimiIds ? "functions." + function + ":" + sep.group(1) : null;
            int end = JsonScan.valueEnd(text, sep.end());
            if (end == JsonScan.BROKEN) {
                return new Calls(calls, done);
            }
            if (end == JsonScan.OPEN) {
                int start = JsonScan.skipSpace(text, sep.end());
                String arguments = start < text.length() ? JsonCalls.arguments(text, start, -1) : "";
                calls.add(new Call(function, arguments, id, false));
                return new Calls(calls, -1);
            }
            String arguments = JsonCalls.arguments(text, JsonScan.skipSpace(text, sep.end()), end);
            int close = JsonScan.skipSpace(text, end);
            String closing = callEnd.strip();
            if (!text.startsWith(closing, close)) {
                if (Markers.startsOrBegins(text, close, closing)) { // cut or still being written
                    calls.add(new Call(function, arguments, id, false));
                    return new Calls(calls, -1);
                }
                return new Calls(calls, done);
            }
            calls.add(new Call(function, arguments, id, true));
            done = close + closing.length();
        }
    }

    private Calls sectionEnd(String text, int at, List<Call> calls, int done) {
        if (sectionEnd != null && text.startsWith(sectionEnd, at)) {
            return new Calls(calls, at + sectionEnd.length());
        }
        return new Calls(calls, done);
    }
}
