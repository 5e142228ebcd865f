package dev.fulcrum.platform;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

@ConfigMapping(prefix = "fulcrum")
public interface FulcrumConfig {

    /** The default of {@link #dataDir()}; also read before this mapping exists, to start the embedded database. */
    String DEFAULT_DATA_DIR = "./data";
    /** The default of {@link EmbeddedDatabaseConfig#port()}: 0 picks a free port. */
    String DEFAULT_EMBEDDED_DATABASE_PORT = "0";

    /** Where the embedded database, keys and blobs live. */
    @WithDefault(DEFAULT_DATA_DIR)
    Path dataDir();

    /** The API key of the administrator created on first start; generated and logged once when absent. */
    Optional<String> bootstrapApiKey();

    EmbeddedDatabaseConfig embeddedDatabase();

    /** Largest JSON request body outside the datasets API, in bytes. */
    @WithDefault("67108864")
    long maxJsonRequestBytes();

    Datasets datasets();

    Jwt jwt();

    Artifacts artifacts();

    Secrets secrets();

    /** Connection timeouts of the HTTP server (read by {@link dev.fulcrum.platform.http.HttpTimeouts}). */
    Http http();

    /**
     * The database check of readiness and /v1/system-check (read by
     * {@link dev.fulcrum.platform.database.DatabaseHealth}).
     */
    Health health();

    /** How many replicas serve this installation (read by {@link dev.fulcrum.platform.database.ReplicaSettings}). */
    Cluster cluster();

    interface Cluster {
        /**
         * The number of replicas that run against the same database. Above 1, the settings every replica must share are
         * required at start: an external database, the master key, the JWT key pair and a shared blob store.
         */
        @WithDefault("1")
        int replicas();
    }

    /** The web console (dev.fulcrum.console). */
    Console console();

    interface Console {
        /** How long a console session lasts after signing in; signing out ends it at once. */
        @WithDefault("PT1H")
        Duration sessionLifetime();
    }

    interface Http {
        /** Time to send a request's headers, after connecting and between two requests on one connection. */
        @WithDefault("PT20S")
        java.time.Duration headerTimeout();
    }

    interface Health {
        /** The database must answer {@code select 1} within this time, or readiness is DOWN. */
        @WithDefault("PT1S")
        java.time.Duration databaseTimeout();
    }

    interface Secrets {
        /**
         * Master key for secrets at rest, base64 of 32 bytes; absent: generated once into
         * {@code ${fulcrum.data-dir}/secrets/master.key} (0600). Replicas must share it.
         */
        Optional<String> masterKey();
    }

    interface EmbeddedDatabaseConfig {
        /** Port of the embedded PostgreSQL; 0 picks a free one. */
        @WithDefault(DEFAULT_EMBEDDED_DATABASE_PORT)
        int port();
    }

    interface Datasets {
        /** Largest accepted request body of the datasets API, in bytes. */
        @WithDefault("67108864")
        long maxRequestBytes();
    }

    interface Jwt {
        /** Issuer of the tokens this server signs. */
        @WithDefault("fulcrum")
        String issuer();

        /** Lifetime of a signed token. */
        @WithDefault("15m")
        Duration lifetime();

        /** PEM private key (PKCS#8) to sign with; generated into the data directory when absent. */
        Optional<Path> privateKey();

        /** PEM public key matching {@link #privateKey()}. */
        Optional<Path> publicKey();
    }

    interface Artifacts {
        /** Largest accepted artifact file, in bytes (5 GiB). */
        @WithDefault("5368709120")
        long maxFileBytes();

        /** Where file contents are kept: {@code filesystem} or {@code s3}. */
        @WithDefault("filesystem")
        String blobStore();

        /** Where the filesystem blob store keeps file contents; default {@code ${fulcrum.data-dir}/blobs}. */
        Optional<Path> blobDir();

        S3 s3();
    }

    /** An S3-compatible object store for blobs (used when {@code fulcrum.artifacts.blob-store=s3}). */
    interface S3 {
        /** Endpoint of an S3-compatible service; absent: AWS S3 of {@link #region()}. */
        Optional<java.net.URI> endpoint();

        Optional<String> bucket();

        @WithDefault("us-east-1")
        String region();

        /** Static credentials; absent: the AWS default credentials chain (environment, profile, instance role). */
        Optional<String> accessKeyId();

        Optional<String> secretAccessKey();

        /** Path-style addressing ({@code endpoint/bucket/key}), which most S3-compatible services need. */
        @WithDefault("true")
        boolean pathStyle();

        /** Prefix of the object keys, e.g. {@code fulcrum/}. */
        Optional<String> prefix();

        /**
         * A blob larger than this is written as an S3 multipart upload of parts this large (one PUT takes at most 5
         * GiB; S3 wants parts of 5 MiB to 5 GiB, at most 10,000): 512 MiB.
         */
        @WithDefault("536870912")
        long partBytes();
    }
}
