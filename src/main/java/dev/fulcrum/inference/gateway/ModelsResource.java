package dev.fulcrum.inference.gateway;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

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
            list.addDataItem(new InferenceModel().id(model.id())._object(InferenceModel.ObjectEnum.MODEL).created(0L)
                    .ownedBy("system").root(model.root()).type(model.backend().type()));
        }
        return Response.ok(list).build();
    }
}
