package dev.fulcrum.inference.catalog;

import java.util.List;
import java.util.concurrent.CompletionStage;

import dev.fulcrum.inference.Backend;
import dev.fulcrum.inference.ServedModel;

/**
 * Where the catalog's models run: one bean for each kind of backend a {@link CatalogModel} names
 * ({@link CatalogModel#backend()}: {@code builtin}, {@code gguf}, {@code openai-compatible}). The catalog asks it for
 * the backend of each model it lists, and {@link CheckpointModels} for the backend of a trained checkpoint of a base
 * model of its kind. Engines know the catalog; the catalog knows them only through this.
 */
public interface Engine {

    /** The backend name of the catalog models this engine serves. */
    String kind();

    /** The backend of a catalog model of this kind; the catalog closes it when the model leaves or changes. */
    Backend serve(CatalogModel model);

    /**
     * The backend answering as {@code checkpoint}, a trained checkpoint of {@code base} (served as {@code baseServed}),
     * asked for as {@code modelId} (named in errors). Runs on a worker thread with the caller's request context (its
     * files are read as the caller); the stage may complete later (a model server loading an adapter). Fails with an
     * {@code InferenceFailure}.
     */
    CompletionStage<Backend> checkpoint(CatalogModel base, ServedModel baseServed, Checkpoint checkpoint,
            String modelId);

    /** The replicas of a catalog model's server and their state; none for engines inside Fulcrum. */
    default List<ServerReplica> replicas(CatalogModel model) {
        return List.of();
    }
}
