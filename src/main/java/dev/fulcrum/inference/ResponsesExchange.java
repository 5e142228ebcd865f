package dev.fulcrum.inference;

import java.util.ArrayList;
import java.util.List;
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
 * events, keeping nothing once the answer is complete: its reasoning ({@code reasoning_content}) as a {@code reasoning}
 * item, its text as a {@code message} item, its tool calls as {@code function_call} items, in the order they came, each
 * item's events ended before the next item's begin.
 */
public final class ResponsesExchange extends ChatExchange {

    private final ResponsesRequest responses;
    private volatile ChatRequest chat;
    private final String id = "resp_" + UUID.randomUUID().toString().replace("-", "");
    private final String itemId = "msg_" + UUID.randomUUID().toString().replace("-", "");
    private final String reasoningId = "rs_" + UUID.randomUUID().toString().replace("-", "");
    private final long createdAt = System.currentTimeMillis() / 1000;
    // the answer's state, touched on the event loop only
    private int sequence;
    private final StringBuilder text = new StringBuilder();
    private final StringBuilder reasoning = new StringBuilder();
    private String finishReason;
    private int inputTokens;
    private int outputTokens;
    /** The output items in order: {@link #REASONING}, {@link #MESSAGE} for the text's item, else the calls. */
    private final List<Object> items = new ArrayList<>();
    private final List<Call> calls = new ArrayList<>();
    /** The item whose events are under way (a stream), or null. */
    private Object open;

    private static final Object MESSAGE = new Object();
    private static final Object REASONING = new Object();

    /** A function call of the answer: the chat completion's tool call as a {@code function_call} item. */
    private static final class Call {
        final String itemId = "fc_" + UUID.randomUUID().toString().replace("-", "");
        String callId;
        String name;
        final StringBuilder arguments = new StringBuilder();
    }

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
        JsonObject message = choice.getJsonObject("message", new JsonObject());
        String thought = message.getString("reasoning_content");
        if (thought != null && !thought.isEmpty()) {
            reasoning.append(thought);
            items.add(REASONING);
        }
        String content = message.getString("content");
        if (content != null && !content.isEmpty()) {
            text.append(content);
            items.add(MESSAGE);
        }
        JsonArray toolCalls = message.getJsonArray("tool_calls", new JsonArray());
        for (int i = 0; i < toolCalls.size(); i++) {
            Call call = call(i, toolCalls.getJsonObject(i));
            call.arguments.append(
                    toolCalls.getJsonObject(i).getJsonObject("function", new JsonObject()).getString("arguments", ""));
        }
        if (!items.contains(MESSAGE) && calls.isEmpty()) {
            items.add(MESSAGE);
        }
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
        JsonObject delta = choice.getJsonObject("delta", new JsonObject());
        String thought = delta.getString("reasoning_content");
        if (thought != null && !thought.isEmpty()) {
            firstToken();
            if (!items.contains(REASONING)) {
                startReasoning();
            }
            reasoning.append(thought);
            send("response.reasoning_text.delta", reasoningPart().put("delta", thought));
        }
        String content = delta.getString("content");
        if (content != null && !content.isEmpty()) {
            firstToken();
            if (!items.contains(MESSAGE)) {
                startMessage();
            }
            text.append(content);
            send("response.output_text.delta", part().put("delta", content).put("logprobs", new JsonArray()));
        }
        JsonArray toolCalls = delta.getJsonArray("tool_calls", new JsonArray());
        for (int i = 0; i < toolCalls.size(); i++) {
            JsonObject piece = toolCalls.getJsonObject(i);
            int index = piece.getInteger("index", calls.size());
            boolean known = index < calls.size();
            Call call = call(index, piece);
            if (!known) {
                firstToken();
                close();
                open = call;
                send("response.output_item.added",
                        new JsonObject().put("output_index", items.indexOf(call)).put("item", callItem(call, false)));
            }
            String arguments = piece.getJsonObject("function", new JsonObject()).getString("arguments");
            if (arguments != null && !arguments.isEmpty()) {
                call.arguments.append(arguments);
                send("response.function_call_arguments.delta", new JsonObject().put("item_id", call.itemId)
                        .put("output_index", items.indexOf(call)).put("delta", arguments));
            }
        }
    }

    /** The call of the chat completion's tool call {@code index}, made from {@code toolCall} the first time. */
    private Call call(int index, JsonObject toolCall) {
        while (calls.size() <= index) {
            Call call = new Call();
            calls.add(call);
            items.add(call);
        }
        Call call = calls.get(index);
        if (call.callId == null && toolCall.getString("id") != null) {
            call.callId = toolCall.getString("id");
        }
        String name = toolCall.getJsonObject("function", new JsonObject()).getString("name");
        if (call.name == null && name != null) {
            call.name = name;
        }
        return call;
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
        if (!items.contains(MESSAGE) && calls.isEmpty()) {
            startMessage();
        }
        close();
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

    /** The message item and its text part, announced before the text's first delta. */
    private void startMessage() {
        close();
        items.add(MESSAGE);
        open = MESSAGE;
        send("response.output_item.added",
                new JsonObject().put("output_index", items.indexOf(MESSAGE)).put("item", message(false)));
        send("response.content_part.added", part().put("part", outputText("")));
    }

    /** The reasoning item, announced before the reasoning's first delta. */
    private void startReasoning() {
        close();
        items.add(REASONING);
        open = REASONING;
        send("response.output_item.added",
                new JsonObject().put("output_index", items.indexOf(REASONING)).put("item", reasoningItem(false)));
    }

    /** Ends the events of the item under way, if any. */
    private void close() {
        if (open == REASONING) {
            send("response.reasoning_text.done", reasoningPart().put("text", reasoning.toString()));
            send("response.output_item.done",
                    new JsonObject().put("output_index", items.indexOf(REASONING)).put("item", reasoningItem(true)));
        } else if (open == MESSAGE) {
            send("response.output_text.done", part().put("text", text.toString()).put("logprobs", new JsonArray()));
            send("response.content_part.done", part().put("part", outputText(text.toString())));
            send("response.output_item.done",
                    new JsonObject().put("output_index", items.indexOf(MESSAGE)).put("item", message(true)));
        } else if (open instanceof Call call) {
            send("response.function_call_arguments.done",
                    new JsonObject().put("item_id", call.itemId).put("output_index", items.indexOf(call))
                            .put("name", call.name).put("arguments", call.arguments.toString()));
            send("response.output_item.done",
                    new JsonObject().put("output_index", items.indexOf(call)).put("item", callItem(call, true)));
        }
        open = null;
    }

    private JsonObject part() {
        return new JsonObject().put("item_id", itemId).put("output_index", items.indexOf(MESSAGE)).put("content_index",
                0);
    }

    private JsonObject reasoningPart() {
        return new JsonObject().put("item_id", reasoningId).put("output_index", items.indexOf(REASONING))
                .put("content_index", 0);
    }

    /** The reasoning as OpenAI's reasoning item: no summary (none is written), the text as its content. */
    private JsonObject reasoningItem(boolean done) {
        return new JsonObject().put("type", "reasoning").put("id", reasoningId).put("summary", new JsonArray())
                .put("content",
                        done ? new JsonArray()
                                .add(new JsonObject().put("type", "reasoning_text").put("text", reasoning.toString()))
                                : new JsonArray())
                .put("status", done ? "completed" : "in_progress");
    }

    private static JsonObject outputText(String text) {
        return new JsonObject().put("type", "output_text").put("text", text).put("annotations", new JsonArray())
                .put("logprobs", new JsonArray());
    }

    private JsonObject message(boolean done) {
        return new JsonObject().put("type", "message").put("id", itemId)
                .put("status", done ? "completed" : "in_progress").put("role", "assistant")
                .put("content", done ? new JsonArray().add(outputText(text.toString())) : new JsonArray());
    }

    private static JsonObject callItem(Call call, boolean done) {
        return new JsonObject().put("type", "function_call").put("id", call.itemId)
                .put("call_id", call.callId == null ? call.itemId : call.callId).put("name", call.name)
                .put("arguments", done ? call.arguments.toString() : "")
                .put("status", done ? "completed" : "in_progress");
    }

    /** The response object: in progress (no output, no usage yet) or done, with its output and usage. */
    private JsonObject response(boolean done) {
        JsonObject body = new JsonObject(responses.body().toString());
        boolean incomplete = done && "length".equals(finishReason);
        JsonArray output = new JsonArray();
        if (done) {
            for (Object item : items) {
                output.add(item == MESSAGE ? message(true)
                        : item == REASONING ? reasoningItem(true) : callItem((Call) item, true));
            }
        }
        JsonObject response = new JsonObject().put("id", id).put("object", "response").put("created_at", createdAt)
                .put("status", !done ? "in_progress" : incomplete ? "incomplete" : "completed").putNull("error")
                .put("incomplete_details", incomplete ? new JsonObject().put("reason", "max_output_tokens") : null)
                .put("instructions", body.getValue("instructions"))
                .put("max_output_tokens", body.getValue("max_output_tokens")).put("model", model().id())
                .put("output", output).put("parallel_tool_calls", valueOr(body, "parallel_tool_calls", true))
                .putNull("previous_response_id").put("store", false)
                .put("temperature", valueOr(body, "temperature", 1.0)).put("top_p", valueOr(body, "top_p", 1.0))
                .put("text", new JsonObject().put("format", format(body)))
                .put("tool_choice", valueOr(body, "tool_choice", "auto")).put("tools", tools(body))
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

    /** The request's function tools as the response shows them ({@link ResponsesRequest} refused any other). */
    private static JsonArray tools(JsonObject body) {
        JsonArray tools = new JsonArray();
        if (body.getValue("tools") instanceof JsonArray asked) {
            for (Object tool : asked) {
                JsonObject function = (JsonObject) tool;
                tools.add(new JsonObject().put("type", "function").put("name", function.getString("name"))
                        .put("description", function.getValue("description"))
                        .put("parameters", function.getValue("parameters")).put("strict", function.getValue("strict")));
            }
        }
        return tools;
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
