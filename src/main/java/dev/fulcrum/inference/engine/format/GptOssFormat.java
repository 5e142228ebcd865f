package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.vertx.core.json.JsonArray;

/**
 * GPT-OSS's harmony format: the answer is messages on channels, each {@code <|channel|>NAME<|message|>TEXT} ended by
 * {@code <|end|>} and the next opened by {@code <|start|>assistant}; {@code analysis} is the reasoning, {@code final}
 * the content, and a message addressed {@code to=functions.NAME} (in its header, before or after the channel) is a call
 * with its JSON arguments as the message. A lazy grammar holds a call from its address on.
 */
final class GptOssFormat implements ChatFormat {

    private static final String CHANNEL = "<|channel|>";
    private static final String MESSAGE = "<|message|>";
    private static final String START = "<|start|>assistant";
    private static final List<String> ENDS = List.of("<|end|>", "<|call|>", "<|return|>");
    private static final String ADDRESS = "to=functions.";
    private static final Pattern RECIPIENT = Pattern.compile("to=functions\\.([^\\s<]+)");

    @Override
    public String name() {
        return "GPT-OSS";
    }

    @Override
    public List<String> printed() {
        return List.of(CHANNEL, MESSAGE, "<|start|>", "<|end|>", "<|constrain|>");
    }

    @Override
    public Constraint calls(JsonArray tools, boolean forced, boolean parallel, Grammars grammars) {
        String calls = Gbnf.namedCalls(tools, grammars, (function, arguments) -> Gbnf.literal(ADDRESS + function)
                + " header " + Gbnf.literal(MESSAGE) + " " + arguments);
        if (calls == null) {
            return null;
        }
        // the recipient comes before the channel (as the model writes it) or after it (as the template does)
        String header = "header ::= \" <|constrain|>json\" | \" json\" | \"<|channel|>commentary\" (\" json\" | "
                + "\" <|constrain|>json\")?\n";
        // a call may come after the reasoning: the grammar starts at the address, so it is lazy even when forced
        return new Constraint(calls + header + "root ::= call\n", List.of(ADDRESS));
    }

    @Override
    public Reply read(String text, Reading reading) {
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        List<Call> calls = new ArrayList<>();
        int at = 0;
        while (at < text.length()) {
            int message = text.indexOf(MESSAGE, at);
            if (message < 0) {
                break; // a header still being written
            }
            String header = text.substring(at, message);
            int body = message + MESSAGE.length();
            int end = Markers.first(text, ENDS, body);
            boolean finished = end >= 0;
            String written = text.substring(body, finished ? end : text.length());
            if (!finished && reading.partial()) {
                written = written.substring(0, Markers.settled(written, ENDS));
            }
            Matcher recipient = RECIPIENT.matcher(header);
            if (recipient.find() && reading.calls()) {
                String arguments = written.strip();
                calls.add(new Call(recipient.group(1), arguments, null,
                        finished || !reading.partial() && JsonScan.valueEnd(arguments, 0) == arguments.length()));
            } else if (header.contains(CHANNEL + "analysis") && reading.reasoning()) {
                reasoning.append(written);
            } else {
                content.append(written);
            }
            if (!finished) {
                break;
            }
            at = end + ENDS.stream().filter(marker -> text.startsWith(marker, end)).findFirst().orElseThrow().length();
            if (text.startsWith(START, at)) {
                at += START.length();
            }
        }
        String thought = reasoning.toString().strip();
        return new Reply(Markers.orNull(content.toString()), thought.isEmpty() ? null : thought, calls);
    }
}
