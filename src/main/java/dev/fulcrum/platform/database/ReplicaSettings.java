package dev.fulcrum.platform.database;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

import org.eclipse.microprofile.config.ConfigProvider;

import io.quarkus.runtime.StartupEvent;

import dev.fulcrum.platform.FulcrumConfig;

/**
 * With {@code fulcrum.cluster.replicas} above 1, the settings that every replica must share are required: otherwise
 * each replica would quietly fall back to one of its own (an embedded database, a generated master key or JWT key pair,
 * blobs in its own data directory) and the replicas would not behave as one server. A replica that lacks one refuses to
 * start and names what is missing.
 */
@ApplicationScoped
public class ReplicaSettings {

    /** The name of the configuration source that supplies the embedded database's URL. */
    static final String EMBEDDED_SOURCE = "fulcrum-embedded-postgresql";

    @Inject
    FulcrumConfig config;

    void check(@Observes @Priority(0) StartupEvent start) {
        String urlSource = ConfigProvider.getConfig().getConfigValue(EmbeddedDatabaseConfigSourceFactory.URL)
                .getSourceName();
        boolean external = urlSource != null && !EMBEDDED_SOURCE.equals(urlSource);
        FulcrumConfig.Artifacts artifacts = config.artifacts();
        List<String> missing = missing(config.cluster().replicas(), external, config.secrets().masterKey(),
                config.jwt().privateKey(), config.jwt().publicKey(), artifacts.blobStore(), artifacts.s3().bucket(),
                artifacts.blobDir());
        if (!missing.isEmpty()) {
            throw new IllegalStateException("fulcrum.cluster.replicas is " + config.cluster().replicas()
                    + ", but the settings every replica must share are not all set: " + String.join("; ", missing));
        }
    }

    /** What is missing for {@code replicas} replicas to behave as one server; empty when all is set or for one. */
    static List<String> missing(int replicas, boolean externalDatabase, Optional<String> masterKey,
            Optional<Path> jwtPrivateKey, Optional<Path> jwtPublicKey, String blobStore, Optional<String> s3Bucket,
            Optional<Path> blobDir) {
        List<String> missing = new ArrayList<>();
        if (replicas <= 1) {
            return missing;
        }
        if (!externalDatabase) {
            missing.add("an external PostgreSQL (quarkus.datasource.jdbc.url), not the embedded one");
        }
        if (masterKey.filter(key -> !key.isBlank()).isEmpty()) {
            missing.add("fulcrum.secrets.master-key (FULCRUM_SECRETS_MASTER_KEY)");
        }
        if (jwtPrivateKey.isEmpty() || jwtPublicKey.isEmpty()) {
            missing.add("the JWT key pair fulcrum.jwt.private-key and fulcrum.jwt.public-key "
                    + "(FULCRUM_JWT_PRIVATE_KEY, FULCRUM_JWT_PUBLIC_KEY)");
        }
        if ("s3".equals(blobStore)) {
            if (s3Bucket.filter(bucket -> !bucket.isBlank()).isEmpty()) {
                missing.add("fulcrum.artifacts.s3.bucket (FULCRUM_ARTIFACTS_S3_BUCKET)");
            }
        } else if (blobDir.isEmpty()) {
            missing.add("a shared blob store: fulcrum.artifacts.blob-store=s3 with fulcrum.artifacts.s3.bucket, "
                    + "or fulcrum.artifacts.blob-dir on a filesystem every replica mounts");
        }
        return missing;
    }
}
