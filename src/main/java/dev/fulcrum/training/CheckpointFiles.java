package dev.fulcrum.training;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;

import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.FileView;
import dev.fulcrum.artifacts.BlobStore;
import dev.fulcrum.platform.json.CanonicalJson;
import dev.fulcrum.tiny.BuiltinModel;
import dev.fulcrum.training.TrainingModels.ModelView;

/**
 * What a checkpoint's artifact version holds. Built-in models: {@code model.bin}, the serialized weights. Models of
 * external workers: the adapter files the worker uploaded; the untrained {@code v0} holds only {@code checkpoint.json}
 * ({@code {"base_model": ..., "step": 0, "adapter": null}}: the base model as is).
 */
@ApplicationScoped
public class CheckpointFiles {

    public static final String UNTRAINED = "checkpoint.json";

    @Inject
    TrainingSettings settings;

    @Inject
    BaseModels baseModels;

    @Inject
    ArtifactVersions artifacts;

    @Inject
    BlobStore blobs;

    private volatile byte[] initialWeights;

    /** The files of step 0. */
    Map<String, byte[]> initial(String baseModel) {
        if (baseModels.builtin(baseModel)) {
            return Map.of(BuiltinModel.FILE, initialWeights());
        }
        String untrained = CanonicalJson.write(
                JsonNodeFactory.instance.objectNode().put("base_model", baseModel).put("step", 0).putNull("adapter"));
        return Map.of(UNTRAINED, untrained.getBytes(StandardCharsets.UTF_8));
    }

    private byte[] initialWeights() {
        byte[] weights = initialWeights;
        if (weights == null) {
            weights = serialize(BuiltinModel.initial());
            initialWeights = weights;
        }
        return weights;
    }

    static byte[] serialize(BuiltinModel model) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try {
            model.write(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    /** The built-in weights of a checkpoint, read as the current caller. */
    BuiltinModel builtin(ModelView model, int step) {
        FileView file = artifacts.file(model.entity(), model.project(), model.name(), "step" + step, BuiltinModel.FILE);
        try (InputStream in = blobs.open(file.digest(), 0, file.size())) {
            return BuiltinModel.read(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
