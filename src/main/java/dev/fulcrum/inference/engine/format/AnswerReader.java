package dev.fulcrum.inference.engine.format;

import java.util.List;
import java.util.UUID;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.format.ChatFormat.Call;
import dev.fulcrum.inference.engine.format.ChatFormat.Reading;
import dev.fulcrum.inference.engine.format.ChatFormat.Reply;

/**
 * How one request's answers read: the model's chat format, how to read (calls, reasoning, a prompt that opened a
 * reasoning block), and whether a grammar held the calls to the format (then they stream as they are written; without
 * one they are checked whole at the end).
 */
public record AnswerReader(ChatFormat format, Reading reading, boolean constrained) {

    /** Answers that are all content: no tools, no reasoning. */
    public static final AnswerReader PLAIN = new AnswerReader(new PlainFormat(),
            new Reading(false, false, false, false), false);

    /** Reads an answer, finished or ({@code partial}) as far as it was generated. */
    public Reply read(String text, boolean partial) {
        Reading how = partial ? new Reading(reading.calls(), reading.reasoning(), reading.thinking(), true)
                : reading.finished();
        return format.read(text, how);
    }

    /** The answer read without calls: for calls that turned out not to be calls of the request's tools. */
    public Reply readAsText(String text) {
        return format.read(text, new Reading(false, reading.reasoning(), reading.thinking(), false));
    }

    /** A new call id, as OpenAI's look. */
    public static String newCallId() {
        return "call_" + UUID.randomUUID().toString().replace("-", "").substring(0, 24);
    }

    /** The calls of a reply as OpenAI's {@code tool_calls}, with the ids given (or new ones where there are none). */
    public JsonArray toolCalls(List<Call> calls, List<String> ids) {
        JsonArray out = new JsonArray();
        for (int i = 0; i < calls.size(); i++) {
            Call call = calls.get(i);
            String id = i < ids.size() ? ids.get(i) : format.callId(call);
            out.add(new JsonObject().put("id", id).put("type", "function").put("function",
                    new JsonObject().put("name", call.name()).put("arguments", call.arguments())));
        }
        return out;
    }

    /** A format with nothing to read: the answer is its content. */
    private static final class PlainFormat implements ChatFormat {

        @Override
        public String name() {
            return "plain";
        }

        @Override
        public Constraint calls(JsonArray tools, boolean forced, boolean parallel, Grammars grammars) {
            return null;
        }

        @Override
        public Reply read(String text, Reading reading) {
            return new Reply(text.isEmpty() ? null : text, null, List.of());
        }
    }
}
