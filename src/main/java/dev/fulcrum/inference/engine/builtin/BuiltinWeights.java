package dev.fulcrum.inference.engine.builtin;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.jboss.logging.Logger;

import dev.fulcrum.platform.FulcrumConfig;
import dev.fulcrum.tiny.BuiltinModel;

/**
 * The built-in model's weights: {@code <data-dir>/models/builtin/weights.bin}, written from
 * {@link BuiltinModel#initial()} (deterministic from a fixed seed) on first use, so that later starts and every replica
 * sharing the data directory use the same weights (and a later training step may replace the file).
 */
@ApplicationScoped
public class BuiltinWeights {

    private static final Logger LOG = Logger.getLogger(BuiltinWeights.class);

    @Inject
    FulcrumConfig config;

    private volatile BuiltinModel model;

    /** The model, read or created on first use; blocking (file I/O), so called from a worker thread. */
    public BuiltinModel model() {
        BuiltinModel loaded = model;
        if (loaded == null) {
            synchronized (this) {
                loaded = model;
                if (loaded == null) {
                    loaded = load(file());
                    model = loaded;
                }
            }
        }
        return loaded;
    }

    Path file() {
        return config.dataDir().resolve("models").resolve("builtin").resolve("weights.bin");
    }

    private static BuiltinModel load(Path file) {
        try {
            if (Files.isRegularFile(file)) {
                try (InputStream in = Files.newInputStream(file)) {
                    return BuiltinModel.read(in);
                }
            }
            BuiltinModel initial = BuiltinModel.initial();
            Files.createDirectories(file.getParent());
            Path temporary = Files.createTempFile(file.getParent(), "weights", ".tmp");
            try (OutputStream out = Files.newOutputStream(temporary)) {
                initial.write(out);
            }
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            LOG.infof("Wrote the built-in model's initial weights to %s", file);
            return initial;
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read or write the built-in model's weights at " + file, e);
        }
    }
}
