package dev.fulcrum.inference.catalog;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import dev.fulcrum.inference.InferenceCaller;
import dev.fulcrum.inference.ServedModel;

/** Every {@link ModelSource}, asked in order of priority: the first that knows a model id serves it. */
@Singleton
public class InferenceModels {

    @Inject
    @Any
    Instance<ModelSource> sourceBeans;

    private volatile List<ModelSource> sources;

    private List<ModelSource> sources() {
        List<ModelSource> known = sources;
        if (known == null) {
            List<ModelSource> all = new ArrayList<>();
            sourceBeans.forEach(all::add);
            all.sort(Comparator.comparingInt(ModelSource::priority));
            known = List.copyOf(all);
            sources = known;
        }
        return known;
    }

    public CompletionStage<Optional<ServedModel>> find(String id, InferenceCaller caller) {
        return find(id, caller, sources(), 0);
    }

    private static CompletionStage<Optional<ServedModel>> find(String id, InferenceCaller caller,
            List<ModelSource> sources, int at) {
        if (at == sources.size()) {
            return CompletableFuture.completedFuture(Optional.empty());
        }
        return sources.get(at).find(id, caller)
                .thenCompose(found -> found.isPresent() ? CompletableFuture.completedFuture(found)
                        : find(id, caller, sources, at + 1));
    }

    /** The model list: every listed model once, the first source's when two list one id. */
    public List<ServedModel> listed() {
        Map<String, ServedModel> models = new LinkedHashMap<>();
        for (ModelSource source : sources()) {
            for (ServedModel model : source.listed()) {
                models.putIfAbsent(model.id(), model);
            }
        }
        return List.copyOf(models.values());
    }
}
