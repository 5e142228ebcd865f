package dev.fulcrum.inference.engine.format;

import java.util.ArrayList;
import java.util.List;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.format.ChatFormat.Call;
import dev.fulcrum.inference.engine.format.ChatFormat.Reply;

/**
 * One choice's answer streamed as OpenAI's chunk deltas while it is generated: the answer so far is read again at each
 * piece and what grew since the last is sent ({@code reasoning_content}, {@code content}, a new call with its id and
 * name, its arguments as they are written). What a format holds back (a marker's beginning, blank space before a call)
 * is sent once it is settled.
 */
public final class ReplyStream {

    private final AnswerReader reader;
    private final StringBuilder text = new StringBuilder();
    private int reasoningSent;
    private int contentSent;
    private final List<String> ids = new ArrayList<>();
    private final List<Integer> argumentsSent = new ArrayList<>();

    public ReplyStream(AnswerReader reader) {
        this.reader = reader;
    }

    /** The deltas a new piece of the answer gives (none while what it adds is held back). */
    public List<JsonObject> add(String piece) {
        text.append(piece);
        return deltas(reader.read(text.toString(), true));
    }

    /** The deltas of the finished answer {@code reply} not sent yet. */
    public List<JsonObject> finish(Reply reply) {
        return deltas(reply);
    }

    /** The ids of the calls sent, in order. */
    public List<String> ids() {
        return ids;
    }

    private List<JsonObject> deltas(Reply reply) {
        List<JsonObject> deltas = new ArrayList<>();
        String reasoning = reply.reasoning();
        if (reasoning != null && reasoning.length() > reasoningSent) {
            deltas.add(new JsonObject().put("reasoning_content", reasoning.substring(reasoningSent)));
            reasoningSent = reasoning.length();
        }
        String content = reply.content();
        if (content != null && content.length() > contentSent) {
            deltas.add(new JsonObject().put("content", content.substring(contentSent)));
            contentSent = content.length();
        }
        for (int i = 0; i < reply.calls().size(); i++) {
            Call call = reply.calls().get(i);
            if (call.name() == null) {
                break;
            }
            JsonObject function = new JsonObject();
            JsonObject delta = new JsonObject().put("index", i);
            if (i >= ids.size()) {
                String id = reader.format().callId(call);
                ids.add(id);
                argumentsSent.add(0);
                delta.put("id", id).put("type", "function");
                function.put("name", call.name());
            }
            String arguments = call.arguments();
            int sent = argumentsSent.get(i);
            if (arguments.length() > sent) {
                function.put("arguments", arguments.substring(sent));
                argumentsSent.set(i, arguments.length());
            } else if (function.containsKey("name")) {
                function.put("arguments", "");
            }
            if (!function.isEmpty()) {
                deltas.add(new JsonObject().put("tool_calls", new JsonArray().add(delta.put("function", function))));
            }
        }
        return deltas;
    }
}
