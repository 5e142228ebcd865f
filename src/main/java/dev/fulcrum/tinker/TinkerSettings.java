package dev.fulcrum.tinker;

import java.time.Duration;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Configuration of the Tinker API ({@code fulcrum.tinker.*}; docs/tinker.md). */
@ConfigMapping(prefix = "fulcrum.tinker")
public interface TinkerSettings {

    /** A session without a heartbeat for this long has ended (the SDK beats every 10 s); its models are released. */
    @WithDefault("120s")
    Duration sessionTimeout();

    /** Longest wait of a {@code retrieve_future} for the operation to end (long poll; the SDK gives up after 45 s). */
    @WithDefault("25s")
    Duration futureWait();

    /** How long an ended operation's result can be fetched; later it is gone (410). */
    @WithDefault("1h")
    Duration resultRetention();

    /** A held model that received no operation for this long is released by its worker. */
    @WithDefault("15m")
    Duration idleRelease();

    /** How long a worker holds a model without renewing its lease; then the model is lost. */
    @WithDefault("60s")
    Duration lease();

    /** The project of a session that names none, in the caller's own entity. */
    @WithDefault("tinker")
    String defaultProject();

    /**
     * The most live training clients (models waiting for a worker or held by one) of the sessions of one entity's
     * projects; a {@code create_model} beyond it fails ({@code user}).
     */
    @WithDefault("10")
    int maxLiveModelsPerEntity();

    /** How often the sweep looks for ended sessions, lost models and expired results. */
    @WithDefault("5s")
    Duration sweepInterval();
}
