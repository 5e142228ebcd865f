package dev.fulcrum.inference.engine.format;

import java.util.List;

/**
 * A format whose calls follow the answer's text behind markers ({@code <tool_call>}, {@code [TOOL_CALLS]}, ...) and
 * whose reasoning, if any, comes first between its think tags. A family says where its calls start and how they read;
 * the reasoning, the content before the calls, and what an unfinished answer holds back are read here, the same for
 * all.
 */
abstract class MarkupFormat implements ChatFormat {

    private final String name;
    private final ThinkTags think;

    /** A family named {@code name}, reasoning between {@code think}'s tags (null when it does not). */
    MarkupFormat(String name, ThinkTags think) {
        this.name = name;
        this.think = think;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public ThinkTags think() {
        return think;
    }

    /** The words at which the calls start (and the lazy grammar's triggers). */
    abstract List<String> callStarts();

    /**
     * The calls written from {@code at} (where one of {@link #callStarts} is); with {@code partial}, the last may be
     * unfinished. A call that does not read (broken JSON, no name) ends the list.
     */
    abstract Calls readCalls(String text, int at, boolean partial);

    /** The tags the family wraps its text to the user in (Command R7B's response block), or null. */
    ThinkTags response() {
        return null;
    }

    /** Calls read, and where the last one read ended. */
    record Calls(List<Call> calls, int end) {
    }

    @Override
    public Reply read(String text, Reading reading) {
        String reasoning = null;
        String rest = text;
        ThinkTags tags = think();
        if (tags != null && reading.reasoning()) {
            Reasoning split = Reasoning.split(text, tags, reading.thinking(), reading.partial());
            reasoning = split.reasoning();
            rest = split.rest();
        }
        if (!reading.calls()) {
            return new Reply(Markers.orNull(unwrapped(rest, reading.partial())), reasoning, List.of());
        }
        int start = Markers.first(rest, callStarts(), 0);
        if (start < 0) {
            String content = reading.partial() ? rest.substring(0, Markers.settled(rest, callStarts())).stripTrailing()
                    : rest;
            return new Reply(Markers.orNull(unwrapped(content, reading.partial())), reasoning, List.of());
        }
        Calls calls = readCalls(rest, start, reading.partial());
        String content = rest.substring(0, start).stripTrailing();
        // text after the calls (a model writing without a grammar) stays in the content, never lost
        String after = reading.partial() || calls.end() < 0 ? "" : rest.substring(calls.end()).strip();
        if (!after.isEmpty()) {
            content = content.isEmpty() ? after : content + "\n" + after;
        }
        return new Reply(Markers.orNull(unwrapped(content, reading.partial())), reasoning, List.copyOf(calls.calls()));
    }

    /** The text inside the family's response tags, where it has them; unfinished, what may be a tag is held back. */
    private String unwrapped(String content, boolean partial) {
        ThinkTags tags = response();
        if (tags == null) {
            return content;
        }
        String text = content.strip();
        if (text.startsWith(tags.open())) {
            text = text.substring(tags.open().length());
        } else if (partial && tags.open().startsWith(text)) {
            return "";
        }
        int close = text.indexOf(tags.close());
        if (close >= 0) {
            return text.substring(0, close);
        }
        return partial ? text.substring(0, Markers.settled(text, List.of(tags.close()))) : text;
    }

    /** A reasoning block and the answer after it. */
    record Reasoning(String reasoning, String rest) {

        /**
         * Splits the reasoning block off the start of an answer ({@code thinking}: the prompt opened it). The reasoning
         * is trimmed; the answer after it starts at its first non-blank character. Unfinished, what may be the closing
         * word or blank space at the end is held back; finished without its closing word, all of it is reasoning.
         */
        static Reasoning split(String text, ThinkTags tags, boolean thinking, boolean partial) {
            int body;
            int lead = JsonScan.skipSpace(text, 0);
            if (thinking) {
                body = 0;
            } else if (text.startsWith(tags.open(), lead)) {
                body = lead + tags.open().length();
            } else if (partial && Markers.startsOrBegins(text, lead, tags.open())) {
                return new Reasoning(null, "");
            } else {
                return new Reasoning(null, text);
            }
            int close = text.indexOf(tags.close(), body);
            if (close < 0) {
                String so = text.substring(body);
                if (partial) {
                    so = so.substring(0, Markers.settled(so, List.of(tags.close())));
                }
                return new Reasoning(Markers.orNull(so.strip()), "");
            }
            String rest = text.substring(close + tags.close().length());
            return new Reasoning(Markers.orNull(text.substring(body, close).strip()),
                    rest.substring(JsonScan.skipSpace(rest, 0)));
        }
    }
}
