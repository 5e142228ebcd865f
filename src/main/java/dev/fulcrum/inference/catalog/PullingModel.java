package dev.fulcrum.inference.catalog;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.ChatExchange;
import dev.fulcrum.inference.ChatRequest;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.TextCompletionBackend;
import dev.fulcrum.inference.TextCompletionExchange;
import dev.fulcrum.inference.TextCompletionRequest;
import dev.fulcrum.inference.hub.ModelPulls;
import dev.fulcrum.inference.hub.PullStatus;
import dev.fulcrum.platform.errors.ApiException;

/**
 * The backend of a model whose file is still being pulled from the Hub (or whose pull failed): every completion is a
 * 503 saying so, with the progress. Not listed in {@code GET /v1/models}; the catalog swaps it for the GGUF engine's
 * backend once the pull is ready.
 */
final class PullingModel implements Backend, TextCompletionBackend {

    private final String name;
    private final String state;
    private final ModelPulls pulls;

    PullingModel(String name, String state, ModelPulls pulls) {
        this.name = name;
        this.state = state;
        this.pulls = pulls;
    }

    /** The pull's state when the catalog made this backend. */
    String state() {
        return state;
    }

    private InferenceFailure refusal(String modelId) {
        if (PullStatus.FAILED.equals(state)) {
            return new InferenceFailure(
                    ApiException.Kind.UNAVAILABLE, "The pull of the model '" + modelId + "' from " + name
                            + " failed; GET /api/v1/admin/models/" + modelId + " says why",
                    null, "model_pull_failed", null);
        }
        String progress = pulls.progress(modelId);
        return new InferenceFailure(ApiException.Kind.UNAVAILABLE,
                "The model '" + modelId + "' is still being pulled from " + name + " ("
                        + (progress == null ? state : progress) + "); it answers once the pull is ready",
                null, "model_pulling", 5);
    }

    @Override
    public void check(ChatRequest request, String modelId) {
        throw refusal(modelId);
    }

    @Override
    public void complete(ChatExchange exchange) {
        throw new IllegalStateException("A model being pulled answers nothing");
    }

    @Override
    public void check(TextCompletionRequest request, String modelId) {
        throw refusal(modelId);
    }

    @Override
    public void complete(TextCompletionExchange exchange) {
        throw new IllegalStateException("A model being pulled answers nothing");
    }

    @Override
    public String type() {
        return "llm";
    }
}
