package dev.fulcrum.inference;

import java.io.IOException;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.errors.ApiException.Kind;

/**
 * A Responses API request ({@code POST /v1/responses}), kept as sent for a server that has the API, and translated to a
 * chat completion ({@link #toChat}) for the stateless bridge.
 */
public record ResponsesRequest(ObjectNode body, byte[] bytes, String model, boolean stream) {

    /** OpenAI's least {@code max_output_tokens}. */
    static final int MIN_OUTPUT_TOKENS = 16;

    public static ResponsesRequest parse(ObjectMapper json, byte[] bytes) {
        ObjectNode body = ChatRequest.object(json, bytes);
        String model = ChatRequest.model(body);
        JsonNode input = body.get("input");
        if (input == null || input.isNull()) {
            throw InferenceFailure.invalid("input", "You must provide an input parameter");
        }
        if (!input.isTextual() && !input.isArray()) {
            throw InferenceFailure.invalid("input", "'input' must be a string or an array of input items");
        }
        return new ResponsesRequest(body, bytes, model, ChatRequest.bool(body, "stream"));
    }

    /**
     * The chat completion the bridge asks for instead: instructions and input as messages (function calls and their
     * outputs as an assistant's tool calls and tool messages), function tools and {@code tool_choice} as the chat
     * completion's, the sampling fields, the text format as {@code response_format}; a stream asks for usage. What
     * needs state or OpenAI's own tools is refused with 400 naming the field ({@code unsupported_parameter}); a field
     * the chat completion finds wrong is named as the Responses API names it.
     */
    public ChatRequest toChat(ObjectMapper json) {
        refuseSet("previous_response_id", "conversation", "prompt", "reasoning");
        refuseTrue("store");
        refuseTrue("background");
        refuseNonEmpty("include");
        ObjectNode chat = json.createObjectNode();
        chat.put("model", model);
        tools(chat);
        ArrayNode messages = chat.putArray("messages");
        JsonNode instructions = body.get("instructions");
        if (instructions != null && !instructions.isNull()) {
            if (!instructions.isTextual()) {
                throw InferenceFailure.invalid("instructions", "'instructions' must be a string");
            }
            messages.addObject().put("role", "system").put("content", instructions.asText());
        }
        JsonNode input = body.get("input");
        if (input.isTextual()) {
            messages.addObject().put("role", "user").put("content", input.asText());
        } else {
            for (int i = 0; i < input.size(); i++) {
                item(messages, input.get(i), "input[" + i + "]");
            }
        }
        if (messages.isEmpty()) {
            throw InferenceFailure.invalid("input", "'input' must not be empty");
        }
        Integer maxOutput = ChatRequest.integer(body, "max_output_tokens", MIN_OUTPUT_TOKENS, Integer.MAX_VALUE);
        if (maxOutput != null) {
            chat.put("max_tokens", maxOutput);
        }
        for (String field : List.of("temperature", "top_p", "user", "metadata")) {
            JsonNode value = body.get(field);
            if (value != null && !value.isNull()) {
                chat.set(field, value);
            }
        }
        JsonNode text = body.get("text");
        if (text != null && !text.isNull() && !text.isObject()) {
            throw InferenceFailure.invalid("text", "'text' must be an object");
        }
        JsonNode format = body.path("text").path("format");
        if (!format.isMissingNode() && !format.isNull() && !format.isObject()) {
            throw InferenceFailure.invalid("text.format", "'text.format' must be an object");
        }
        if (format.isObject()) {
            String type = format.path("type").asText("");
            switch (type) {
                case "text" -> {
                }
                case "json_object" -> chat.putObject("response_format").put("type", "json_object");
                case "json_schema" -> {
                    ObjectNode schema = chat.putObject("response_format").put("type", "json_schema")
                            .putObject("json_schema");
                    for (String field : List.of("name", "schema", "strict", "description")) {
                        if (format.has(field)) {
                            schema.set(field, format.get(field));
                        }
                    }
                }
                default -> throw InferenceFailure.invalid("text.format.type",
                        "'text.format.type' must be 'text', 'json_object' or 'json_schema'");
            }
        }
        if (stream) {
            chat.put("stream", true);
            chat.putObject("stream_options").put("include_usage", true);
        }
        try {
            return ChatRequest.parse(json, json.writeValueAsBytes(chat));
        } catch (InferenceFailure failure) {
            throw renamed(failure);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A chat completion's failure with its {@code param} named as the Responses API names the field. */
    public static InferenceFailure renamed(InferenceFailure failure) {
        String param = failure.param();
        if (param == null) {
            return failure;
        }
        String renamed = param.equals("max_tokens") || param.equals("max_completion_tokens") ? "max_output_tokens"
                : param.equals("response_format") ? "text.format" : param.startsWith("messages") ? "input" : param;
        return renamed.equals(param) ? failure
                : failure.withParam(renamed,
                        failure.getMessage().replace("'" + param + "'", "'" + renamed + "'").replace(param, renamed));
    }

    /**
     * The function tools as the chat completion's ({@code {"type": "function", "function": {"name", "description",
     * "parameters", "strict"}}}) and {@code tool_choice} as its; OpenAI's own tools (web search, file search and the
     * rest) run on OpenAI's servers and are refused by name.
     */
    private void tools(ObjectNode chat) {
        JsonNode tools = body.get("tools");
        if (tools != null && !tools.isNull()) {
            if (!tools.isArray()) {
                throw InferenceFailure.invalid("tools", "'tools' must be an array");
            }
            ArrayNode functions = JsonNodeFactory.instance.arrayNode();
            for (int i = 0; i < tools.size(); i++) {
                JsonNode tool = tools.get(i);
                String at = "tools[" + i + "]";
                if (!tool.isObject() || !tool.path("type").isTextual()) {
                    throw InferenceFailure.invalid(at, "'" + at + "' must be an object with a 'type'");
                }
                if (!tool.path("type").asText().equals("function")) {
                    throw unsupported(at + ".type");
                }
                if (!tool.path("name").isTextual()) {
                    throw InferenceFailure.invalid(at + ".name", "'" + at + ".name' must be a string");
                }
                ObjectNode function = functions.addObject().put("type", "function").putObject("function");
                for (String field : List.of("name", "description", "parameters", "strict")) {
                    JsonNode value = tool.get(field);
                    if (value != null && !value.isNull()) {
                        function.set(field, value);
                    }
                }
            }
            if (!functions.isEmpty()) {
                chat.set("tools", functions);
            }
        }
        JsonNode choice = body.get("tool_choice");
        if (choice == null || choice.isNull()) {
            return;
        }
        if (choice.isTextual() && List.of("none", "auto").contains(choice.asText()) && !chat.has("tools")) {
            return; // asks for nothing without tools, as OpenAI's default
        }
        if (choice.isTextual() && List.of("none", "auto", "required").contains(choice.asText())) {
            chat.set("tool_choice", choice);
        } else if (choice.isObject() && choice.path("type").asText().equals("function")
                && choice.path("name").isTextual()) {
            chat.putObject("tool_choice").put("type", "function").putObject("function").put("name",
                    choice.path("name").asText());
        } else {
            throw unsupported("tool_choice");
        }
    }

    /**
     * One input item as messages: a message as it is, a {@code function_call} as an assistant's tool call (calls in a
     * row are one assistant message, as a chat completion answers them), a {@code function_call_output} as a tool
     * message; other items are refused by name.
     */
    private void item(ArrayNode messages, JsonNode item, String at) {
        if (!item.isObject()) {
            throw InferenceFailure.invalid(at, "'" + at + "' must be an object");
        }
        switch (item.path("type").asText("message")) {
            case "function_call" -> {
                for (String field : List.of("call_id", "name", "arguments")) {
                    if (!item.path(field).isTextual()) {
                        throw InferenceFailure.invalid(at + "." + field, "'" + at + "." + field + "' must be a string");
                    }
                }
                JsonNode last = messages.isEmpty() ? null : messages.get(messages.size() - 1);
                ObjectNode assistant = last != null && last.path("role").asText().equals("assistant")
                        && last.path("content").isNull() && last.has("tool_calls") ? (ObjectNode) last
                                : messages.addObject().put("role", "assistant").putNull("content");
                ArrayNode calls = assistant.has("tool_calls") ? (ArrayNode) assistant.get("tool_calls")
                        : assistant.putArray("tool_calls");
                calls.addObject().put("id", item.path("call_id").asText()).put("type", "function").putObject("function")
                        .put("name", item.path("name").asText()).put("arguments", item.path("arguments").asText());
            }
            case "function_call_output" -> {
                if (!item.path("call_id").isTextual()) {
                    throw InferenceFailure.invalid(at + ".call_id", "'" + at + ".call_id' must be a string");
                }
                messages.addObject().put("role", "tool").put("tool_call_id", item.path("call_id").asText())
                        .put("content", text(item.get("output"), at + ".output"));
            }
            case "message" -> messages.add(message(item, at));
            default -> throw unsupported(at + ".type");
        }
    }

    private ObjectNode message(JsonNode item, String at) {
        String role = item.path("role").asText("");
        if (!List.of("user", "assistant", "system", "developer").contains(role)) {
            throw InferenceFailure.invalid(at + ".role",
                    "'" + at + ".role' must be 'user', 'assistant', 'system' or 'developer'");
        }
        return JsonNodeFactory.instance.objectNode().put("role", role).put("content",
                text(item.get("content"), at + ".content"));
    }

    /** A string, or the text of {@code input_text} / {@code output_text} parts; other parts are refused by name. */
    private String text(JsonNode content, String at) {
        if (content != null && content.isTextual()) {
            return content.asText();
        }
        if (content == null || !content.isArray()) {
            throw InferenceFailure.invalid(at, "'" + at + "' must be a string or an array of text parts");
        }
        StringBuilder joined = new StringBuilder();
        for (int j = 0; j < content.size(); j++) {
            JsonNode part = content.get(j);
            String partType = part.path("type").asText("");
            if (!List.of("input_text", "output_text", "text").contains(partType) || !part.path("text").isTextual()) {
                throw unsupported(at + "[" + j + "]");
            }
            joined.append(part.path("text").asText());
        }
        return joined.toString();
    }

    private void refuseSet(String... fields) {
        for (String field : fields) {
            JsonNode value = body.get(field);
            if (value != null && !value.isNull()) {
                throw unsupported(field);
            }
        }
    }

    private void refuseTrue(String field) {
        if (body.path(field).asBoolean(false)) {
            throw unsupported(field);
        }
    }

    private void refuseNonEmpty(String field) {
        JsonNode value = body.get(field);
        if (value != null && !value.isNull() && !(value.isArray() && value.isEmpty())) {
            throw unsupported(field);
        }
    }

    private InferenceFailure unsupported(String param) {
        return new InferenceFailure(Kind.INVALID,
                "'" + param + "' is not supported for the model '" + model
                        + "': Fulcrum answers it through a stateless bridge to chat completions",
                param, "unsupported_parameter", null);
    }
}
