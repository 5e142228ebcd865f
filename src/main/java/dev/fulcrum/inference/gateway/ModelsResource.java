package dev.fulcrum.inference.gateway;

import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.OpenAiErrors;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.api.InferenceModelsApi;
import dev.fulcrum.inference.api.model.InferenceModel;
import dev.fulcrum.inference.api.model.InferenceModelList;
import dev.fulcrum.inference.catalog.InferenceModels;

public class ModelsResource implements InferenceModelsApi {

    @Inject
    InferenceModels models;

    @Override
    public Response listInferenceModels() {
        InferenceModelList list = new InferenceModelList()._object(InferenceModelList.ObjectEnum.LIST);
        for (ServedModel model : models.listed()) {
            list.addDataItem(map(model));
        }
        return Response.ok(list).build();
    }

    /** Its own path template: model ids hold '/' ({@code team/model}), which the OpenAI SDKs send unencoded. */
    @GET
    @Path("/{model: .+}")
    @Produces(MediaType.APPLICATION_JSON)
    @Override
    public Response retrieveInferenceModel(@PathParam("model") String model) {
        for (ServedModel served : models.listed()) {
            if (served.id().equals(model)) {
                return Response.ok(map(served)).build();
            }
        }
        InferenceFailure unknown = InferenceFailure.modelNotFound(model);
        return Response.status(unknown.status()).type(MediaType.APPLICATION_JSON_TYPE)
                .entity(OpenAiErrors.body(unknown).getBytes()).build();
    }

    private static InferenceModel map(ServedModel model) {
        return new InferenceModel().id(model.id())._object(InferenceModel.ObjectEnum.MODEL).created(0L)
                .ownedBy("system").root(model.root()).type(model.backend().type());
    }
}
