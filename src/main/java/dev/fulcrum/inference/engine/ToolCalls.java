package dev.fulcrum.inference.engine;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.format.AnswerReader;
import dev.fulcrum.inference.engine.format.ChatFormat.Call;
import dev.fulcrum.inference.engine.format.ChatFormat.Reply;
import dev.fulcrum.platform.json.JsonSchemas;

/** The tool calls in a local model's finished answer, as OpenAI returns them. */
final class ToolCalls {

    private ToolCalls() {
    }

    /**
     * A finished answer read in the model's format. Calls no grammar held to the request's tools must each name one of
     * them with arguments that match its parameters ({@link JsonSchemas}), or the answer is all text. A forced call
     * that ended before its name was written ({@code max_tokens}) is answered as OpenAI answers a cut call: the only
     * function it could be, with the arguments written so far, never the call's text as content.
     */
    static Reply reply(AnswerReader reader, String text, ChatPrompt chat) {
        Reply reply = reader.read(text, false);
        if (!reader.reading().calls()) {
            return reply;
        }
        List<Call> calls = new ArrayList<>(reply.calls());
        calls.removeIf(call -> call.name() == null);
        Map<String, JsonObject> parameters = new HashMap<>();
        for (Object tool : chat.tools()) {
            JsonObject function = ((JsonObject) tool).getJsonObject("function");
            parameters.put(function.getString("name"), function.getJsonObject("parameters"));
        }
        if (!reader.constrained() && !calls.isEmpty() && !calls.stream().allMatch(call -> valid(call, parameters))) {
            return reader.readAsText(text);
        }
        if (chat.toolMode() == ChatPrompt.ToolMode.FORCED && calls.isEmpty()) {
            List<String> names = forcedNames(chat);
            return new Reply(null, reply.reasoning(),
                    names.size() == 1 ? List.of(new Call(names.get(0), "", null, false)) : List.of());
        }
        return new Reply(reply.content(), reply.reasoning(), calls);
    }

    /** The names a forced call's schema allows: those of the tools it may call. */
    private static List<String> forcedNames(ChatPrompt chat) {
        List<String> names = new ArrayList<>();
        chat.callable().forEach(tool -> names.add(((JsonObject) tool).getJsonObject("function").getString("name")));
        return names;
    }

    /** Whether a call is written whole, names one of the tools and has an object of arguments that match. */
    private static boolean valid(Call call, Map<String, JsonObject> parameters) {
        if (!call.complete() || !parameters.containsKey(call.name())) {
            return false;
        }
        JsonObject arguments;
        try {
            arguments = new JsonObject(call.arguments());
        } catch (DecodeException | ClassCastException e) {
            return false;
        }
        JsonObject schema = parameters.get(call.name());
        return schema == null || JsonSchemas.matches(arguments.encode(), schema.encode());
    }
}
