package dev.fulcrum.inference.engine.upstream;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.IntSupplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;

import dev.fulcrum.inference.ChatExchange;
import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.EmbeddingExchange;
import dev.fulcrum.inference.EmbeddingRequest;
import dev.fulcrum.inference.Exchange;
import dev.fulcrum.inference.Exchange.Outcome;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.JsonString;
import dev.fulcrum.inference.ResponsesExchange;
import dev.fulcrum.inference.ResponsesRequest;
import dev.fulcrum.inference.TextCompletionExchange;
import dev.fulcrum.inference.TextCompletionRequest;

/**
 * One model name of a model server speaking the OpenAI chat API (vLLM, SGLang, llama.cpp, Ollama, TGI, hosted
 * providers): one replica's answer to one attempt of a request ({@link RoutedBackend} chooses the replica).
 * Non-blocking end to end on the Vert.x HTTP client: the body goes upstream with {@code model} replaced; a plain answer
 * comes back with {@code model} replaced and {@code usage} added when the upstream gave none; a stream is passed
 * through event by event as it arrives (the upstream is asked for usage, which is dropped again unless the client asked
 * for it). The server's connections are its {@link ModelServer}'s: {@code maxConcurrency} at most, {@code maxQueue}
 * requests waiting for one, 429 beyond.
 */
final class OpenAiCompatibleBackend {

    private final ModelServer server;
    private final ObjectMapper json;
    private final Target chat;
    private final Target completions;
    private final Target embeddings;
    private final Target responses;
    private final String upstreamModel;
    /** {@link #upstreamModel} as a JSON string in UTF-8, for requests passed on as bytes. */
    private final byte[] upstreamModelLiteral;

    /** The model {@code upstreamModel} of {@code server} (the requests were checked by {@link RoutedBackend}). */
    OpenAiCompatibleBackend(ObjectMapper json, ModelServer server, String upstreamModel) {
        this.json = json;
        this.server = server;
        this.chat = Target.of(server, "chat/completions");
        this.completions = Target.of(server, "completions");
        this.embeddings = Target.of(server, "embeddings");
        this.responses = Target.of(server, "responses");
        this.upstreamModel = upstreamModel;
        this.upstreamModelLiteral = JsonString.quote(upstreamModel).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * A path of the server's API and the options of a request to it, plain and streamed: built once, read (never
     * changed) by every request.
     */
    private record Target(RequestOptions plain, RequestOptions stream) {

        static Target of(ModelServer server, String relative) {
            return new Target(server.options(HttpMethod.POST, relative, "application/json"),
                    server.options(HttpMethod.POST, relative, "text/event-stream"));
        }

        RequestOptions options(boolean streamed) {
            return streamed ? stream : plain;
        }
    }

    void complete(ChatExchange exchange) {
        ChatRequest request = exchange.request();
        send(exchange, chat, upstreamBody(request.body(), request.bytes(), request.stream()), request.stream(),
                response -> {
                    if (response.statusCode() >= 400) {
                        UpstreamErrors.relay(json, exchange, response);
                    } else if (request.stream()) {
                        new UpstreamStream(exchange, response, upstreamModel).start();
                    } else {
                        plain(exchange, response, () -> TokenEstimate.prompt(request.messages()),
                                choice -> choice.path("message").path("content").asText(""));
                    }
                });
    }

    void complete(TextCompletionExchange exchange) {
        TextCompletionRequest request = exchange.request();
        send(exchange, completions, upstreamBody(request.body(), request.bytes(), request.stream()), request.stream(),
                response -> {
                    if (response.statusCode() >= 400) {
                        UpstreamErrors.relay(json, exchange, response);
                    } else if (request.stream()) {
                        new UpstreamStream(exchange, response, upstreamModel, request.includeUsage(),
                                () -> TokenEstimate.input(request.body().get("prompt")), "text_completion",
                                "\"text\":\"").start();
                    } else {
                        plain(exchange, response, () -> TokenEstimate.input(request.body().get("prompt")),
                                choice -> choice.path("text").asText(""));
                    }
                });
    }

    void embed(EmbeddingExchange exchange) {
        EmbeddingRequest request = exchange.request();
        send(exchange, embeddings, upstreamBody(request.body(), request.bytes(), false), false, response -> {
            if (response.statusCode() >= 400) {
                UpstreamErrors.relay(json, exchange, response);
            } else {
                plain(exchange, response, () -> TokenEstimate.input(request.body().get("input")), choice -> "");
            }
        });
    }

    /**
     * Passes a Responses API request to the server's {@code /responses}. {@code orElse} runs instead when the server
     * has no such path (a 404 or 405 without an OpenAI error object, remembered for this backend).
     */
    void respond(ResponsesExchange exchange, Runnable orElse) {
        ResponsesRequest request = exchange.responsesRequest();
        send(exchange, responses, upstreamBody(request.body(), request.bytes(), false), request.stream(), response -> {
            int status = response.statusCode();
            if (status == 404 || status == 405) {
                response.body().onComplete(read -> {
                    if (read.succeeded() && UpstreamErrors.errorObject(json, read.result()) != null
                            && UpstreamErrors.errorObject(json, read.result()).path("message").isTextual()) {
                        InferenceFailure failure = InferenceFailure
                                .upstream(UpstreamErrors.refusal(status),
                                        new InferenceFailure.Upstream(status, "invalid_request_error"),
                                        UpstreamErrors.message(json, read.result()), null, null, null)
                                .causedBy(InferenceFailure.ServerFault.answered(status));
                        exchange.fail(failure);
                        exchange.finish(new Outcome(status, 0, 0));
                    } else {
                        server.noResponsesApi = true;
                        orElse.run();
                    }
                });
            } else if (status >= 400) {
                UpstreamErrors.relay(json, exchange, response);
            } else if (request.stream()) {
                new ResponsesUpstreamStream(exchange, response, upstreamModel).start();
            } else {
                respondPlain(exchange, response);
            }
        });
    }

    /** A Responses API answer: {@code model} set to the catalog id, usage read from {@code input_tokens}. */
    private void respondPlain(ResponsesExchange exchange, HttpClientResponse response) {
        response.body().onComplete(read -> {
            if (read.failed()) {
                UpstreamErrors.fail(exchange, read.cause());
                return;
            }
            ObjectNode answer = answerObject(exchange, read.result().getBytes());
            if (answer == null) {
                return;
            }
            answer.put("model", exchange.model().id());
            JsonNode usage = answer.path("usage");
            int input = usage.path("input_tokens").asInt(0);
            int output = usage.path("output_tokens").asInt(0);
            try {
                exchange.json(200, Buffer.buffer(json.writeValueAsBytes(answer)));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            exchange.finish(new Outcome(200, input, output));
        });
    }

    /**
     * Sends {@code payload} to the server at {@code uri} and hands its answer to {@code answered}; connection failures
     * end the exchange with the matching error, and the client going away resets the upstream request.
     */
    private void send(Exchange exchange, Target target, Buffer payload, boolean stream,
            Consumer<HttpClientResponse> answered) {
        server.client().request(target.options(stream)).onComplete(connected -> {
            if (connected.failed()) {
                UpstreamErrors.fail(exchange, connected.cause());
                return;
            }
            HttpClientRequest upstream = connected.result();
            exchange.onCancel(upstream::reset);
            upstream.send(payload).onComplete(sent -> {
                if (sent.failed()) {
                    UpstreamErrors.fail(exchange, sent.cause());
                } else {
                    answered.accept(sent.result());
                }
            });
        });
    }

    /**
     * The request for the upstream: a plain one as the client sent it with only {@code model} replaced (as bytes), a
     * stream also asking for usage.
     */
    private Buffer upstreamBody(ObjectNode body, byte[] bytes, boolean stream) {
        if (!stream) {
            try {
                TopLevel sent = TopLevel.scan(json.getFactory(), bytes);
                if (sent != null) {
                    return sent.withModelLiteral(bytes, upstreamModelLiteral);
                }
            } catch (IOException e) {
                // it was parsed before, so this does not happen; the tree below is the way that always works
            }
        }
        // the checked request keeps its own copy of the model id
        body.put("model", upstreamModel);
        if (stream) {
            body.putObject("stream_options").put("include_usage", true);
        }
        try {
            return Buffer.buffer(json.writeValueAsBytes(body));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * A plain answer: the upstream's bytes with {@code model} replaced when it has a usage with its counts (the usual
     * case, no tree built), else a tree with the usage estimated and added.
     */
    private void plain(Exchange exchange, HttpClientResponse response, IntSupplier promptEstimate,
            Function<JsonNode, String> choiceText) {
        response.body().onComplete(read -> {
            if (read.failed()) {
                UpstreamErrors.fail(exchange, read.cause());
                return;
            }
            byte[] bytes = read.result().getBytes();
            try {
                TopLevel answer = TopLevel.scan(json.getFactory(), bytes);
                if (answer != null && answer.hasUsage()) {
                    exchange.json(200, answer.withModel(bytes, exchange.model().id()));
                    exchange.finish(new Outcome(200, answer.promptTokens(), answer.completionTokens()));
                    return;
                }
            } catch (IOException e) {
                UpstreamErrors.fail(exchange, UpstreamErrors.badAnswer(exchange.model().id()));
                return;
            }
            ObjectNode completion = answerObject(exchange, bytes);
            if (completion == null) {
                return;
            }
            completion.put("model", exchange.model().id());
            JsonNode usage = completion.get("usage");
            int prompt;
            int completionTokens;
            if (usage != null && usage.isObject() && usage.path("prompt_tokens").isInt()) {
                prompt = usage.path("prompt_tokens").asInt();
                completionTokens = usage.path("completion_tokens").asInt();
            } else {
                prompt = promptEstimate.getAsInt();
                completionTokens = 0;
                for (JsonNode choice : completion.path("choices")) {
                    completionTokens += TokenEstimate.text(choiceText.apply(choice));
                }
                completion.putObject("usage").put("prompt_tokens", prompt).put("completion_tokens", completionTokens)
                        .put("total_tokens", prompt + completionTokens);
            }
            try {
                exchange.json(200, Buffer.buffer(json.writeValueAsBytes(completion)));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            exchange.finish(new Outcome(200, prompt, completionTokens));
        });
    }

    /** The server's answer as a JSON object; null when it is none, after failing the exchange with a 502. */
    private ObjectNode answerObject(Exchange exchange, byte[] bytes) {
        try {
            if (json.readTree(bytes) instanceof ObjectNode object) {
                return object;
            }
        } catch (IOException e) {
            // not JSON: failed below as any other answer that is no object
        }
        UpstreamErrors.fail(exchange, UpstreamErrors.badAnswer(exchange.model().id()));
        return null;
    }
}
