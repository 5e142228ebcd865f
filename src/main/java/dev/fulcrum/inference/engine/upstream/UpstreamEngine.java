package dev.fulcrum.inference.engine.upstream;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.vertx.core.Vertx;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.inference.catalog.CatalogModel;
import dev.fulcrum.inference.catalog.Checkpoint;
import dev.fulcrum.inference.catalog.CheckpointExports;
import dev.fulcrum.inference.catalog.Engine;
import dev.fulcrum.inference.catalog.ServerReplica;
import dev.fulcrum.platform.http.OutboundHttp;

/**
 * The catalog's {@code openai-compatible} models, each the {@link Replicas} of its server (its base URLs, and the
 * addresses of their host names) behind a {@link RoutedBackend}, and their trained checkpoints as LoRA adapters of that
 * server (vLLM's runtime LoRA loading): the checkpoint's files are exported once ({@link CheckpointExports}), and each
 * replica is asked to load them when a request for the checkpoint is routed to it ({@link AdapterLoader}); completions
 * go to the server with the adapter's name as {@code model}. Step 0 is the base model itself.
 */
@ApplicationScoped
public class UpstreamEngine implements Engine {

    @Inject
    Vertx vertx;

    @Inject
    OutboundHttp http;

    @Inject
    ObjectMapper json;

    @Inject
    CheckpointExports files;

    @Inject
    InferenceConfig config;

    @Inject
    HostResolver resolver;

    @Inject
    RoutingMetrics metrics;

    /** The replicas of each catalog model this engine serves now, by model id. */
    private final Map<String, Replicas> served = new ConcurrentHashMap<>();
    private AdapterLoader loader;

    @PostConstruct
    void init() {
        loader = new AdapterLoader(json, metrics, config.routing().adaptersPerReplica());
    }

    @Override
    public String kind() {
        return CatalogModel.OPENAI_COMPATIBLE;
    }

    @Override
    public Backend serve(CatalogModel model) {
        Replicas replicas = new Replicas(model, config.routing(), vertx, http, resolver, metrics, Clock.systemUTC());
        served.put(model.id(), replicas);
        // the catalog model's own backend: closing it closes its replicas
        return backend(replicas, model.upstreamModelOrId(), null, model.maxTokens(), () -> {
            served.remove(model.id(), replicas);
            replicas.close();
        });
    }

    private RoutedBackend backend(Replicas replicas, String upstreamModel, CheckpointExports.Export adapter,
            Integer maxTokens, Runnable onClose) {
        return new RoutedBackend(replicas, json, loader, metrics, upstreamModel, adapter, maxTokens,
                config.routing().retries(), config.routing().affinityPrefixChars(), onClose);
    }

    @Override
    public CompletionStage<Backend> checkpoint(CatalogModel base, ServedModel baseServed, Checkpoint checkpoint,
            String modelId) {
        if (checkpoint.step() == 0) { // the untrained checkpoint: the base model as is
            return CompletableFuture.completedFuture(baseServed.backend());
        }
        Replicas replicas = served.get(base.id());
        if (replicas == null) {
            throw new IllegalStateException("The model " + base.id() + " is not served by this engine");
        }
        CheckpointExports.Export adapter = files.export(checkpoint);
        return CompletableFuture.completedFuture(backend(replicas, adapter.name(), adapter, null, () -> {
        }));
    }

    @Override
    public List<ServerReplica> replicas(CatalogModel model) {
        Replicas replicas = served.get(model.id());
        if (replicas == null) {
            return List.of();
        }
        return replicas.shown().stream().map(replica -> {
            Replica.State state = replica.state();
            return new ServerReplica(replica.url, replica.name, replica.weight, state.state(), state.ejectedUntil(),
                    state.ejectionReason(), state.ejections(), state.inFlight(), state.latencyMillis(),
                    state.adapters());
        }).toList();
    }
}
