package dev.fulcrum.accounts;

import java.time.Duration;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Configuration of the access decisions kept in memory ({@code fulcrum.access.*}). */
@ConfigMapping(prefix = "fulcrum.access")
public interface AccountsConfig {

    /**
     * How long the access changes listener waits before it connects again after losing its connection; meanwhile the
     * replica checks every request against the database.
     */
    @WithDefault("1s")
    Duration listenerRetry();
}
