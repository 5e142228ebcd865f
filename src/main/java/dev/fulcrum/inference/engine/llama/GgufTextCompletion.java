package dev.fulcrum.inference.engine.llama;

import io.vertx.core.json.JsonObject;

import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.TextCompletionExchange;
import dev.fulcrum.inference.TextCompletionRequest;
import dev.fulcrum.inference.engine.LocalLogprobs;
import dev.fulcrum.inference.engine.LocalTextCompletion;
import dev.fulcrum.inference.engine.LocalTextCompletion.Continuation;
import dev.fulcrum.inference.engine.LocalTextCompletion.Pieces;

/**
 * A GGUF model's text completion: each prompt continued as written (no chat template; the vocabulary's start token
 * added when it asks for one, special tokens in the text read as such, as llama-server does; a prompt of token ids, the
 * model's own, taken as they are, as vLLM and llama-server take them), a choice per turn ({@link LocalTextCompletion}),
 * with the tokens' log probabilities when asked.
 */
final class GgufTextCompletion extends LocalTextCompletion {

    private final GgufBackend backend;
    private final TextCompletionExchange exchange;
    private final TextCompletionRequest request;
    private final String modelId;
    private LlamaEngine.Lease lease;

    GgufTextCompletion(GgufBackend backend, TextCompletionExchange exchange) {
        super(exchange);
        this.backend = backend;
        this.exchange = exchange;
        this.request = exchange.request();
        this.modelId = exchange.model().id();
    }

    @Override
    protected void load() {
        lease = hold(backend.lease());
        if (request.tokenPrompts() != null) {
            GgufBackend.checkTokens(request.tokenPrompts(), lease.model(), "prompt", modelId);
        }
    }

    @Override
    protected Continuation continueText(int prompt, int i, Pieces onPiece) {
        int[] tokens = request.tokenPrompts() != null ? request.tokenPrompts().get(prompt)
                : lease.model().tokenize(request.prompts().get(prompt), true, true);
        if (tokens.length == 0) {
            tokens = new int[] { lease.model().bos() };
        }
        int limit = backend.limit(request.maxTokensOrDefault(), tokens.length, "prompt");
        LocalLogprobs recorded = request.logprobs() == null ? null : new LocalLogprobs();
        boolean scored = scoresPrompt();
        StringBuilder sent = new StringBuilder();
        JsonObject[] promptLogprobs = new JsonObject[1];
        Generation generation = new Generation(tokens, GgufBackend.sampling(request.temperature(), request.topP(),
                request.seed(), i, request.body(), lease.model().vocabSize()), limit,
                recorded == null ? -1 : request.logprobs(), scored);
        GgufGeneration.Result generated = GgufGeneration.run(lease, backend.loraPath, backend.shape, generation,
                request.stop(), recorded, exchange, modelId, !scored ? null : () -> {
                    // the echoed prompt goes first, with its tokens' log probabilities (offsets from 0)
                    promptLogprobs[0] = recorded.takeText(0);
                    sent.append(promptText(prompt));
                    if (onPiece != null) {
                        onPiece.piece(sent.toString(), promptLogprobs[0]);
                    }
                }, onPiece == null ? null : piece -> {
                    onPiece.piece(piece, recorded == null ? null : recorded.takeText(sent.length()));
                    sent.append(piece);
                });
        JsonObject logprobs = null;
        if (recorded != null) {
            // the continuation's offsets count from the echoed prompt's end
            logprobs = recorded.takeText(sent.length());
            if (onPiece == null && promptLogprobs[0] != null) {
                logprobs = LocalLogprobs.joined(promptLogprobs[0], logprobs);
            }
        }
        return new Continuation(generated.text(), generated.finishReason(), i == 0 ? tokens.length : 0,
                generated.completionTokens(), logprobs);
    }

    /** With {@code echo} and {@code logprobs} the prompt's own tokens are scored, as vLLM scores them. */
    @Override
    protected boolean scoresPrompt() {
        return request.echo() && request.logprobs() != null;
    }

    /** A prompt of token ids is echoed as their text (their pieces' bytes, read as UTF-8). */
    @Override
    protected String promptText(int prompt) {
        if (request.tokenPrompts() == null) {
            return super.promptText(prompt);
        }
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (int token : request.tokenPrompts().get(prompt)) {
            bytes.writeBytes(lease.model().piece(token));
        }
        return bytes.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    @Override
    protected InferenceFailure failed(Throwable e) {
        return backend.failed(modelId, e);
    }
}
