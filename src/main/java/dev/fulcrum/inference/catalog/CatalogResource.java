package dev.fulcrum.inference.catalog;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.inference.api.InferenceCatalogApi;
import dev.fulcrum.inference.api.model.InferenceBackend;
import dev.fulcrum.inference.api.model.InferenceCatalogModel;
import dev.fulcrum.inference.api.model.InferenceCatalogModelSettings;
import dev.fulcrum.inference.catalog.ModelCatalog.Change;

public class CatalogResource implements InferenceCatalogApi {

    @Inject
    Access access;

    @Inject
    ModelCatalog catalog;

    @Override
    public Response listCatalogModels() {
        access.serverAdmin();
        return Response.ok(catalog.list().stream().map(CatalogResource::map).toList()).build();
    }

    @Override
    public Response getCatalogModel(String model) {
        access.serverAdmin();
        return Response.ok(map(catalog.get(model))).build();
    }

    @Override
    public Response createCatalogModel(InferenceCatalogModelSettings create) {
        access.serverAdmin();
        Change change = new Change(create.getBackend().toString(), create.getBaseUrl(), create.getApiKey(),
                create.getUpstreamModel(), create.getRoot(), create.getConnectTimeoutMs(), create.getTimeoutMs(),
                create.getMaxConcurrency(), create.getMaxQueue(), create.getMaxTokens(), create.getGgufPath());
        return Response.status(201).entity(map(catalog.create(create.getId(), change))).build();
    }

    @Override
    public Response updateCatalogModel(String model, InferenceCatalogModelSettings update) {
        access.serverAdmin();
        Change change = new Change(update.getBackend().toString(), update.getBaseUrl(), update.getApiKey(),
                update.getUpstreamModel(), update.getRoot(), update.getConnectTimeoutMs(), update.getTimeoutMs(),
                update.getMaxConcurrency(), update.getMaxQueue(), update.getMaxTokens(), update.getGgufPath());
        return Response.ok(map(catalog.update(model, change))).build();
    }

    @Override
    public Response deleteCatalogModel(String model) {
        access.serverAdmin();
        catalog.delete(model);
        return Response.noContent().build();
    }

    static InferenceCatalogModel map(CatalogModel model) {
        boolean upstream = CatalogModel.OPENAI_COMPATIBLE.equals(model.backend());
        return new InferenceCatalogModel().id(model.id()).backend(InferenceBackend.fromValue(model.backend()))
                .baseUrl(model.baseUrl()).upstreamModel(upstream ? model.upstreamModelOrId() : null)
                .root(model.rootOrId()).hasApiKey(model.apiKey() != null && !model.apiKey().isEmpty())
                .connectTimeoutMs(upstream ? (int) model.connectTimeoutMs() : null)
                .timeoutMs(upstream ? (int) model.timeoutMs() : null).maxConcurrency(model.maxConcurrency())
                .maxQueue(model.maxQueue()).maxTokens(model.maxTokens())
                .ggufPath(model.gguf() == null ? null : model.gguf().path())
                .source(InferenceCatalogModel.SourceEnum.fromValue(model.source()));
    }
}
