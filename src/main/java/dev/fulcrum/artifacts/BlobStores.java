package dev.fulcrum.artifacts;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;

import dev.fulcrum.platform.FulcrumConfig;

/** Chooses the blob store by {@code fulcrum.artifacts.blob-store}; only the chosen one is created. */
@ApplicationScoped
public class BlobStores {

    @Produces
    @ApplicationScoped
    BlobStore blobStore(FulcrumConfig config, Instance<FileSystemBlobStore> filesystem, Instance<S3BlobStore> s3) {
        return switch (config.artifacts().blobStore()) {
            case "filesystem" -> filesystem.get();
            case "s3" -> s3.get();
            default -> throw new IllegalStateException(
                    "fulcrum.artifacts.blob-store must be filesystem or s3, not " + config.artifacts().blobStore());
        };
    }
}
