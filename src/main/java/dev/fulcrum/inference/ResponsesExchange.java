package dev.fulcrum.inference;

import java.util.UUID;
import java.util.function.Consumer;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * One Responses API request on its way ({@code POST /v1/responses}). Passed through to a server that has the API, it
 * behaves as any exchange. Bridged ({@link #bridge}), it is the chat completion a backend answers, and it turns what
 * the backend writes (a {@code chat.completion}, or its chunks) into a {@code response} object or the Responses API's
 * events, keeping nothing once the answer is complete.
 */
public final class ResponsesExchange extends ChatExchange {

    private final ResponsesRequest responses;
    private volatile ChatRequest chat;
    private final String id = "resp_" + UUID.randomUUID().toString().replace("-", "");
    private final String itemId = "msg_" + UUID.randomUUID().toString().replace("-", "");
    private final long createdAt = System.currentTimeMillis() / 1000;
    // the stream's state, touched on the event loop only
    private int sequence;
    private final StringBuilder text = new StringBuilder();
    private String finishReason;
    private int inputTokens;
    private int outputTokens;
    private boolean itemStarted;

    public ResponsesExchange(RoutingContext context, ResponsesRequest request, ServedModel model,
            InferenceCaller caller, Consumer<Outcome> onFinish) {
        super(context, null, model, caller, onFinish);
        this.responses = request;
    }

    /** The Responses API request. */
    public ResponsesRequest responsesRequest() {
        return responses;
    }

    /** The chat completion the bridge asks for; null while the request is passed through. */
    @Override
    public ChatRequest request() {
        return chat;
    }

    @Override
    public boolean stream() {
        return responses.stream();
    }

    /** From now on this is the chat completion {@code chat}, answered as a response. */
    public void bridge(ChatRequest chat) {
        this.chat = chat;
    }

    private boolean bridged() {
        return chat != null;
    }

    @Override
    public void json(int status, Buffer body) {
        if (!bridged() || status != 200) {
            super.json(status, body);
            return;
        }
        JsonObject completion = body.toJsonObject();
        JsonArray choices = completion.getJsonArray("choices", new JsonArray());
        JsonObject choice = choices.isEmpty() ? new JsonObject() : choices.getJsonObject(0);
        JsonObject usage = completion.getJsonObject("usage", new JsonObject());
        text.append(choice.getJsonObject("message", new JsonObject()).getString("content", ""));
        finishReason = choice.getString("finish_reason");
        inputTokens = usage.getInteger("prompt_tokens", 0);
        outputTokens = usage.getInteger("completion_tokens", 0);
        super.json(200, response(true).toBuffer());
    }

    @Override
    public void startStream() {
        super.startStream();
        if (bridged()) {
            send("response.created", new JsonObject().put("response", response(false)));
            send("response.in_progress", new JsonObject().put("response", response(false)));
        }
    }

    @Override
    public void event(String json) {
        if (!bridged()) {
            super.event(json);
            return;
        }
        JsonObject chunk = new JsonObject(json);
        JsonObject usage = chunk.getJsonObject("usage");
        if (usage != null) {
            inputTokens = usage.getInteger("prompt_tokens", 0);
            outputTokens = usage.getInteger("completion_tokens", 0);
        }
        JsonArray choices = chunk.getJsonArray("choices");
        if (choices == null || choices.isEmpty()) {
            return;
        }
        JsonObject choice = choices.getJsonObject(0);
        if (choice.getString("finish_reason") != null) {
            finishReason = choice.getString("finish_reason");
        }
        String delta = choice.getJsonObject("delta", new JsonObject()).getString("content");
        startItem();
        if (delta != null && !delta.isEmpty()) {
            firstToken();
            text.append(delta);
            send("response.output_text.delta", part().put("delta", delta).put("logprobs", new JsonArray()));
        }
    }

    @Override
    public void passThrough(String event) {
        if (!bridged()) {
            super.passThrough(event);
        } else if (event.startsWith("data:")) {
            event(event.substring(5).strip());
        }
    }

    @Override
    public void done() {
        if (!bridged()) {
            super.done();
            return;
        }
        startItem();
        send("response.output_text.done", part().put("text", text.toString()).put("logprobs", new JsonArray()));
        send("response.content_part.done", part().put("part", outputText(text.toString())));
        send("response.output_item.done", new JsonObject().put("output_index", 0).put("item", item(true)));
        boolean complete = !"length".equals(finishReason);
        send(complete ? "response.completed" : "response.incomplete", new JsonObject().put("response", response(true)));
        endStream();
    }

    @Override
    public void fail(InferenceFailure failure) {
        if (!bridged() || !response().headWritten()) {
            super.fail(failure);
            return;
        }
        JsonObject failed = response(false).put("status", "failed").put("error",
                new JsonObject().put("code", failure.code() == null ? OpenAiErrors.type(failure) : failure.code())
                        .put("message", failure.getMessage()));
        send("response.failed", new JsonObject().put("response", failed));
        endStream();
    }

    /** The message item and its text part, announced once before the first delta. */
    private void startItem() {
        if (itemStarted) {
            return;
        }
        itemStarted = true;
        send("response.output_item.added", new JsonObject().put("output_index", 0).put("item", item(false)));
        send("response.content_part.added", part().put("part", outputText("")));
    }

    private JsonObject part() {
        return new JsonObject().put("item_id", itemId).put("output_index", 0).put("content_index", 0);
    }

    private static JsonObject outputText(String text) {
        return new JsonObject().put("type", "output_text").put("text", text).put("annotations", new JsonArray())
                .put("logprobs", new JsonArray());
    }

    private JsonObject item(boolean done) {
        return new JsonObject().put("type", "message").put("id", itemId)
                .put("status", done ? "completed" : "in_progress").put("role", "assistant")
                .put("content", done ? new JsonArray().add(outputText(text.toString())) : new JsonArray());
    }

    /** The response object: in progress (no output, no usage yet) or done, with its output and usage. */
    private JsonObject response(boolean done) {
        JsonObject body = new JsonObject(responses.body().toString());
        boolean incomplete = done && "length".equals(finishReason);
        JsonObject response = new JsonObject().put("id", id).put("object", "response").put("created_at", createdAt)
                .put("status", !done ? "in_progress" : incomplete ? "incomplete" : "completed").putNull("error")
                .put("incomplete_details", incomplete ? new JsonObject().put("reason", "max_output_tokens") : null)
                .put("instructions", body.getValue("instructions"))
                .put("max_output_tokens", body.getValue("max_output_tokens")).put("model", model().id())
                .put("output", done ? new JsonArray().add(item(true)) : new JsonArray())
                .put("parallel_tool_calls", true).putNull("previous_response_id").put("store", false)
                .put("temperature", valueOr(body, "temperature", 1.0)).put("top_p", valueOr(body, "top_p", 1.0))
                .put("text", new JsonObject().put("format", format(body)))
                .put("tool_choice", valueOr(body, "tool_choice", "auto")).put("tools", new JsonArray())
                .put("truncation", "disabled").put("metadata", valueOr(body, "metadata", new JsonObject()));
        // OpenAI's document allows a string or nothing here, and its API leaves both out until they are known
        if (body.getValue("user") instanceof String user) {
            response.put("user", user);
        }
        if (done) {
            response.put("usage", new JsonObject().put("input_tokens", inputTokens)
                    .put("input_tokens_details", new JsonObject().put("cached_tokens", 0).put("cache_write_tokens", 0))
                    .put("output_tokens", outputTokens)
                    .put("output_tokens_details", new JsonObject().put("reasoning_tokens", 0))
                    .put("total_tokens", inputTokens + outputTokens));
        }
        return response;
    }

    /** The request's {@code text.format} (checked by {@link ResponsesRequest}), or plain text when it names none. */
    private static JsonObject format(JsonObject body) {
        return body.getValue("text") instanceof JsonObject text && text.getValue("format") instanceof JsonObject format
                ? format
                : new JsonObject().put("type", "text");
    }

    private static Object valueOr(JsonObject body, String field, Object otherwise) {
        Object value = body.getValue(field);
        return value == null ? otherwise : value;
    }

    /** One event of the stream: {@code event: type} and its data with the type and the next sequence number. */
    private void send(String type, JsonObject data) {
        JsonObject event = new JsonObject().put("type", type).put("sequence_number", sequence++);
        event.getMap().putAll(data.getMap());
        super.passThrough("event: " + type + "\ndata: " + event.encode());
    }
}
