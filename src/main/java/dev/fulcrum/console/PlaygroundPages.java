package dev.fulcrum.console;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestQuery;

import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.inference.api.InferenceModelsApi;
import dev.fulcrum.inference.api.model.InferenceModel;
import dev.fulcrum.inference.api.model.InferenceModelList;

/**
 * The inference playground: a chat model of {@code /v1/models} or a checkpoint reference, the project the completion is
 * counted for, system and user messages, temperature and max tokens. The page's script ({@code assets/playground.js})
 * posts the request to {@code /console/playground/completions} (the completion route run as the session's user, see
 * {@code dev.fulcrum.inference.gateway.ConsoleCompletions}), shows the answer as it streams in with its usage and
 * latency, and shows the same request as {@code curl} and OpenAI-SDK code (with {@code $FULCRUM_API_KEY} where the key
 * goes).
 */
@Path("/console/playground")
@AuthenticatesWithSession
@Blocking
public class PlaygroundPages {

    @Inject
    InferenceModelsApi models;

    /** The playground with a model (a listed id or a {@code wandb-artifact:///} reference) and project chosen. */
    static String link(String model, String project) {
        if (model == null || model.isBlank()) {
            return null;
        }
        return "/console/playground?model=" + Pages.path(model)
                + (project == null || project.isBlank() ? "" : "&project=" + Pages.path(project));
    }

    @GET
    public Response playground(@RestQuery String model, @RestQuery String project) {
        return Pages.page(() -> {
            // the models that chat: not an embedding model (an upstream's model, of unknown type, is offered)
            List<String> ids = Pages.<InferenceModelList> body(models.listInferenceModels()).getData().stream()
                    .filter(listed -> !"embeddings".equals(listed.getType())).map(InferenceModel::getId).toList();
            String chosen = model == null || model.isBlank() ? ids.isEmpty() ? "" : ids.get(0) : model.strip();
            return TrainingTemplates.playground(ids, new TrainingTemplates.Form(chosen,
                    project == null ? "" : project.strip(), chosen.isEmpty() || ids.contains(chosen)));
        });
    }
}
