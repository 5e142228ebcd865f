package dev.fulcrum.inference.engine.format;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.engine.ChatPrompt;

/**
 * What a template that cannot show tools or past calls is given instead, as llama.cpp's minja does for such templates:
 * the tools listed in a system message, an assistant's calls as JSON in its content, a tool's answer as the user's
 * JSON. {@link PolyfilledFormat} puts it around a family's format; the generic format uses it itself.
 */
final class ToolPolyfill {

    private ToolPolyfill() {
    }

    /** The tools' functions, as the system message lists them. */
    static String toolList(JsonArray tools) {
        JsonArray functions = new JsonArray();
        Gbnf.functions(tools).forEach(functions::add);
        return "You can call these tools:\n" + functions.encodePrettily();
    }

    /** The messages with {@code text} at the end of their system message, or in a new one first. */
    static JsonArray withSystemText(JsonArray messages, String text) {
        JsonArray out = messages.copy();
        JsonObject first = out.isEmpty() ? null : out.getJsonObject(0);
        if (first != null && "system".equals(first.getString("role"))) {
            out.set(0, first.copy().put("content", first.getString("content") + "\n\n" + text));
        } else {
            out.add(0, new JsonObject().put("role", "system").put("content", text));
        }
        return out;
    }

    /**
     * The messages with each assistant's calls as JSON in its content ({@code {"tool_calls": [{"name", "arguments"}],
     * "content"}}) and each tool's answer as the user's {@code {"tool_response": {"tool_call_id", "content"}}}, the
     * answers in a row one user message.
     */
    static JsonArray callsAsContent(JsonArray messages) {
        JsonArray out = new JsonArray();
        for (Object item : messages) {
            JsonObject message = (JsonObject) item;
            JsonArray calls = message.getJsonArray("tool_calls");
            if (calls != null) {
                JsonArray written = new JsonArray();
                for (Object call : calls) {
                    JsonObject function = ((JsonObject) call).getJsonObject("function");
                    written.add(new JsonObject().put("name", function.getString("name")).put("arguments",
                            argumentsValue(function.getString("arguments"))));
                }
                JsonObject content = new JsonObject().put("tool_calls", written);
                String text = message.getString("content", "");
                if (!text.isEmpty()) {
                    content.put("content", text);
                }
                out.add(new JsonObject().put("role", "assistant").put("content", content.encode()));
            } else if ("tool".equals(message.getString("role"))) {
                String answer = new JsonObject()
                        .put("tool_response", new JsonObject().put("tool_call_id", message.getString("tool_call_id"))
                                .put("content", message.getString("content")))
                        .encode();
                JsonObject last = out.isEmpty() ? null : out.getJsonObject(out.size() - 1);
                if (last != null && "user".equals(last.getString("role"))
                        && last.getString("content").startsWith("{\"tool_response\"")) {
                    out.set(out.size() - 1, last.copy().put("content", last.getString("content") + "\n" + answer));
                } else {
                    out.add(new JsonObject().put("role", "user").put("content", answer));
                }
            } else {
                out.add(message);
            }
        }
        return out;
    }

    private static Object argumentsValue(String arguments) {
        try {
            return new JsonObject(arguments);
        } catch (DecodeException | ClassCastException e) {
            return arguments;
        }
    }

    /** The prompt a template that shows neither tools nor calls (or one of them) is given. */
    static ChatFormat.Rendering render(ChatPrompt prompt, boolean showsTools, boolean showsCalls) {
        JsonArray messages = showsCalls ? prompt.messages() : callsAsContent(prompt.messages());
        if (prompt.tools() != null && !showsTools) {
            messages = withSystemText(messages, toolList(prompt.tools()));
        }
        return new ChatFormat.Rendering(messages, showsTools ? prompt.tools() : null);
    }
}
