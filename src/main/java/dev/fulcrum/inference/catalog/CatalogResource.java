package dev.fulcrum.inference.catalog;

import java.math.BigDecimal;
import java.time.ZoneOffset;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.inference.api.InferenceCatalogApi;
import dev.fulcrum.inference.api.model.InferenceBackend;
import dev.fulcrum.inference.api.model.InferenceCatalogModel;
import dev.fulcrum.inference.api.model.InferenceCatalogModelSettings;
import dev.fulcrum.inference.api.model.InferenceCatalogReplica;
import dev.fulcrum.inference.api.model.InferenceModelPull;
import dev.fulcrum.inference.catalog.ModelCatalog.Change;
import dev.fulcrum.inference.hub.PullStatus;

public class CatalogResource implements InferenceCatalogApi {

    @Inject
    Access access;

    @Inject
    ModelCatalog catalog;

    @Override
    public Response listCatalogModels() {
        access.serverAdmin();
        return Response.ok(catalog.list().stream().map(this::map).toList()).build();
    }

    @Override
    public Response getCatalogModel(String model) {
        access.serverAdmin();
        return Response.ok(map(catalog.get(model))).build();
    }

    @Override
    public Response createCatalogModel(InferenceCatalogModelSettings create) {
        access.serverAdmin();
        CatalogModel created = catalog.create(create.getId(), change(create));
        return Response.status(create.getPull() == null ? 201 : 202).entity(map(created)).build();
    }

    @Override
    public Response updateCatalogModel(String model, InferenceCatalogModelSettings update) {
        access.serverAdmin();
        return Response.ok(map(catalog.update(model, change(update)))).build();
    }

    @Override
    public Response deleteCatalogModel(String model) {
        access.serverAdmin();
        catalog.delete(model);
        return Response.noContent().build();
    }

    @Override
    public Response retryModelPull(String model) {
        access.serverAdmin();
        return Response.accepted(map(catalog.retryPull(model))).build();
    }

    private static Change change(InferenceCatalogModelSettings settings) {
        return new Change(settings.getBackend().toString(), settings.getBaseUrl(), settings.getBaseUrls(),
                settings.getApiKey(), settings.getUpstreamModel(), settings.getRoot(), settings.getConnectTimeoutMs(),
                settings.getTimeoutMs(), settings.getMaxConcurrency(), settings.getMaxQueue(), settings.getMaxTokens(),
                settings.getGgufPath(), settings.getRouting(), settings.getFallbacks(),
                settings.getReasoningFormat() == null ? null : settings.getReasoningFormat().toString(),
                settings.getPull(), settings.getRevision(), settings.getTrainable());
    }

    private InferenceCatalogModel map(CatalogModel read) {
        // the pull's state first, the model after it: a pull shown ready has its file in the catalog by then
        PullStatus pull = CatalogModel.GGUF.equals(read.backend()) ? catalog.pull(read.id()).orElse(null) : null;
        CatalogModel model = pull == null ? read : catalog.latest(read);
        boolean upstream = CatalogModel.OPENAI_COMPATIBLE.equals(model.backend());
        return new InferenceCatalogModel().id(model.id()).backend(InferenceBackend.fromValue(model.backend()))
                .baseUrl(model.baseUrls().isEmpty() ? null : plain(model.baseUrls().get(0))).baseUrls(model.baseUrls())
                .routing(upstream ? InferenceCatalogModel.RoutingEnum.fromValue(model.routing()) : null)
                .fallbacks(model.fallbacks())
                .replicas(catalog.replicas(model).stream().map(CatalogResource::map).toList())
                .upstreamModel(upstream ? model.upstreamModelOrId() : null).root(model.rootOrId())
                .hasApiKey(model.apiKey() != null && !model.apiKey().isEmpty())
                .connectTimeoutMs(upstream ? (int) model.connectTimeoutMs() : null)
                .timeoutMs(upstream ? (int) model.timeoutMs() : null).maxConcurrency(model.maxConcurrency())
                .maxQueue(model.maxQueue()).maxTokens(model.maxTokens())
                .ggufPath(model.gguf() == null ? null : model.gguf().path())
                .reasoningFormat(model.gguf() == null ? null
                        : InferenceCatalogModel.ReasoningFormatEnum.fromValue(model.gguf().reasoningFormat()))
                .source(InferenceCatalogModel.SourceEnum.fromValue(model.source())).trainable(model.trainable())
                .pull(pull == null ? null : map(pull));
    }

    private static InferenceModelPull map(PullStatus pull) {
        return new InferenceModelPull().name(pull.name()).revision(pull.revision()).commit(pull.commit())
                .files(pull.files()).state(InferenceModelPull.StateEnum.fromValue(pull.state()))
                .completedBytes(pull.completedBytes()).totalBytes(pull.totalBytes())
                .bytesPerSecond(
                        pull.bytesPerSecond() == null ? null : BigDecimal.valueOf(Math.round(pull.bytesPerSecond())))
                .error(pull.error());
    }

    private static InferenceCatalogReplica map(ServerReplica replica) {
        return new InferenceCatalogReplica().url(plain(replica.url())).name(replica.name()).weight(replica.weight())
                .state(InferenceCatalogReplica.StateEnum.fromValue(replica.state()))
                .ejectedUntil(replica.ejectedUntil() == null ? null : replica.ejectedUntil().atOffset(ZoneOffset.UTC))
                .ejectionReason(replica.ejectionReason()).ejections(replica.ejections()).inFlight(replica.inFlight())
                .latencyMs(replica.latencyMillis() == null ? null : BigDecimal.valueOf(replica.latencyMillis()))
                .adapters(replica.adapters());
    }

    /** A base URL without its weight. */
    private static String plain(String url) {
        int hash = url.indexOf('#');
        return hash < 0 ? url : url.substring(0, hash);
    }
}
