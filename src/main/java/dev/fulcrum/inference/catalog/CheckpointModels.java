package dev.fulcrum.inference.catalog;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.quarkus.arc.Arc;
import io.quarkus.arc.ManagedContext;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.inference.InferenceCaller;
import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.ServedModel;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Trained checkpoints as chat models: {@code wandb-artifact:///{entity}/{project}/{model}} (the latest checkpoint),
 * {@code ...:step{N}}, or any version of the model's artifact collection ({@code ...:v<N>}, {@code ...:production}: the
 * checkpoint holding the alias when the request comes, so moving the alias moves what is served), for whoever may use
 * the model ({@link TrainedCheckpoints} decides). A checkpoint is served by the {@link Engine} of its base model's kind
 * in the catalog: the built-in model over the checkpoint's weights, a GGUF model with the checkpoint's LoRA adapter, an
 * {@code openai-compatible} model's server with the adapter loaded into it. The lookup reads the database, so it runs
 * on worker threads of its own, never on the event loop.
 */
@ApplicationScoped
public class CheckpointModels implements ModelSource {

    static final String PREFIX = "wandb-artifact:///";
    private static final Pattern ID = Pattern.compile("wandb-artifact:///([^/]+)/([^/]+)/([^/:]+)(?::([^/:]+))?");

    @Inject
    TrainedCheckpoints checkpoints;

    @Inject
    ModelCatalog catalog;

    @Inject
    InferenceConfig inference;

    @Inject
    Access access;

    private ThreadPoolExecutor workers;

    private synchronized ThreadPoolExecutor workers() {
        if (workers == null) {
            int threads = inference.builtin().threads();
            AtomicInteger count = new AtomicInteger();
            workers = new ThreadPoolExecutor(threads, threads, 60, TimeUnit.SECONDS, new ArrayBlockingQueue<>(1024),
                    task -> {
                        Thread thread = new Thread(task, "checkpoint-model-" + count.incrementAndGet());
                        thread.setDaemon(true);
                        return thread;
                    });
        }
        return workers;
    }

    @PreDestroy
    synchronized void stop() {
        if (workers != null) {
            workers.shutdownNow();
        }
    }

    @Override
    public CompletionStage<Optional<ServedModel>> find(String id) {
        return CompletableFuture.completedFuture(Optional.empty()); // checkpoints are served to a known caller only
    }

    @Override
    public CompletionStage<Optional<ServedModel>> find(String id, InferenceCaller caller) {
        if (id == null || !id.startsWith(PREFIX)) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        Matcher m = ID.matcher(id);
        if (!m.matches()) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        CompletableFuture<Optional<ServedModel>> result = new CompletableFuture<>();
        Runnable lookup = () -> {
            ManagedContext context = Arc.container().requestContext();
            context.activate();
            try {
                access.actAs(caller.caller());
                serve(id, m.group(1), m.group(2), m.group(3), m.group(4)).whenComplete((served, failure) -> {
                    if (failure == null) {
                        result.complete(served);
                    } else {
                        result.completeExceptionally(
                                failure instanceof CompletionException wrapped && wrapped.getCause() != null
                                        ? wrapped.getCause()
                                        : failure);
                    }
                });
            } catch (ApiException e) {
                if (e.kind() == ApiException.Kind.FORBIDDEN) {
                    result.completeExceptionally(InferenceFailure.forbidden(e.getMessage()));
                } else {
                    result.complete(Optional.empty());
                }
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            } finally {
                context.terminate();
            }
        };
        try {
            workers().execute(lookup);
        } catch (RejectedExecutionException e) {
            result.completeExceptionally(InferenceFailure.atCapacity(id));
        }
        return result;
    }

    /** Runs on a worker thread with the caller's request context; only an engine's own loading completes later. */
    private CompletionStage<Optional<ServedModel>> serve(String id, String entity, String project, String name,
            String version) {
        Checkpoint checkpoint = checkpoints.find(entity, project, name, version).orElse(null);
        if (checkpoint == null) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        CatalogModel base = catalog.lookup(checkpoint.baseModel())
                .orElseThrow(() -> InferenceFailure.notFound(
                        "Checkpoints of " + checkpoint.baseModel() + " are served by the inference catalog's model "
                                + checkpoint.baseModel() + ", and there is none"));
        ServedModel baseServed = catalog.served(base.id());
        if (baseServed.backend() instanceof PullingModel pulling) {
            pulling.check((dev.fulcrum.inference.ChatRequest) null, base.id()); // the base's 503, with the progress
        }
        return catalog.engine(base).checkpoint(base, baseServed, checkpoint, id)
                .thenApply(backend -> Optional.of(new ServedModel(id, checkpoint.baseModel(), backend)));
    }

    @Override
    public List<ServedModel> listed() {
        return List.of();
    }
}
