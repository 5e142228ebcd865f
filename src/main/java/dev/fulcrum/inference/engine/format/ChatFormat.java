package dev.fulcrum.inference.engine.format;

import java.util.List;
import java.util.Map;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.ChatPrompt;

/**
 * A model family's chat format, as its chat template teaches it: how the request's tools and past calls reach the
 * template, the grammar that holds the model to the family's call markup (lazy, from the words that start a call, when
 * the model may also answer text), and how an answer, finished or still being generated, reads as content, reasoning
 * and tool calls. {@link ChatFormats#detect} picks one from a template's markers, as llama.cpp does.
 */
public interface ChatFormat {

    /** The family, as {@code docs/inference.md}'s table of formats names it. */
    String name();

    /**
     * The messages and tools the template renders for {@code prompt}: the request's own, or rewritten where the
     * template cannot take tools or calls (the generic format).
     */
    default Rendering render(ChatPrompt prompt) {
        return new Rendering(prompt.messages(), prompt.tools(), Map.of());
    }

    /**
     * The grammar of a tool-calling answer: for {@code forced} calls the whole answer's, otherwise lazy (text until one
     * of its triggers, then only calls). Null when the format has none for these tools.
     */
    Constraint calls(JsonArray tools, boolean forced, boolean parallel, Grammars grammars);

    /** Reads an answer (or, {@link Reading#partial}, the part generated so far). */
    Reply read(String text, Reading reading);

    /**
     * The family's markers that must reach the answer's text even where the vocabulary holds them as special tokens
     * (which are otherwise not printed): a call's start and end, the think tags.
     */
    default List<String> printed() {
        return think() == null ? List.of() : List.of(think().open(), think().close());
    }

    /**
     * The id of a call read from an answer: the one the model wrote where the family's ids say something (Kimi K2's
     * {@code functions.NAME:index}), otherwise a new one, known when the call's name is.
     */
    default String callId(Call call) {
        return call.id() != null ? call.id() : AnswerReader.newCallId();
    }

    /** The words that open and close a reasoning block in this family's answers, or null when it has none. */
    default ThinkTags think() {
        return null;
    }

    /**
     * What the template renders: messages, tools (null when none), and the variables a family's template reads besides
     * them (a JSON value is given as its JSON text).
     */
    record Rendering(JsonArray messages, JsonArray tools, Map<String, Object> variables) {

        public Rendering(JsonArray messages, JsonArray tools) {
            this(messages, tools, Map.of());
        }
    }

    /** A reasoning block's opening and closing words. */
    record ThinkTags(String open, String close) {
    }

    /**
     * How to read an answer.
     *
     * @param calls
     *            whether the request's tools may be called (tools given, {@code tool_choice} not none)
     * @param reasoning
     *            whether reasoning goes to {@code reasoning_content} ({@code reasoning_format} other than none)
     * @param thinking
     *            whether the prompt opened a reasoning block the answer continues (it ends with the opening word)
     * @param partial
     *            whether the answer is still being generated: what may yet become a marker is held back
     */
    record Reading(boolean calls, boolean reasoning, boolean thinking, boolean partial) {

        Reading finished() {
            return new Reading(calls, reasoning, thinking, false);
        }
    }

    /** An answer read: content and reasoning (null when none) and the calls. */
    record Reply(String content, String reasoning, List<Call> calls) {
    }

    /**
     * A tool call read from an answer.
     *
     * @param name
     *            the function's name, null while it is still being written
     * @param arguments
     *            the arguments' JSON as written so far
     * @param id
     *            the id the model wrote (Mistral's), or null for one to be made
     * @param complete
     *            whether the call was written to its end
     */
    record Call(String name, String arguments, String id, boolean complete) {
    }

    /**
     * A grammar (GBNF, root {@code root}) and the words from which it applies; with none it holds the whole answer.
     */
    record Constraint(String grammar, List<String> triggers) {
    }

    /** llama.cpp's grammars of JSON schemas, for the engine that runs them. */
    interface Grammars {

        /**
         * The rules of {@code schema}'s values: its root rule named {@code name}, its other rules prefixed with
         * {@code name-}, so that several schemas' rules live in one grammar. Null when the schema has keywords the
         * converter does not take.
         */
        String rules(String name, JsonObject schema);
    }
}
