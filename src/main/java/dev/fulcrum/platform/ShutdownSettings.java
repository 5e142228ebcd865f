package dev.fulcrum.platform;

import java.time.Duration;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * How long a draining replica gives what it is doing ({@code fulcrum.shutdown.*}), each counted from the moment the
 * drain began (see {@link Drain}).
 */
@ConfigMapping(prefix = "fulcrum.shutdown")
public interface ShutdownSettings {

    /**
     * Chat completions under way may run this long; those still running then end with an error (an error event and the
     * end of the stream, or a 503 when nothing was answered yet). Keep it below {@code quarkus.shutdown.timeout}, which
     * bounds how long the HTTP server waits for requests under way before it closes.
     */
    @WithDefault("10s")
    Duration streamGrace();

    /**
     * Webhook attempts under way may run this long; the deliveries of those still running are then released: due at
     * once for any replica, the unfinished attempt not counted.
     */
    @WithDefault("10s")
    Duration webhookGrace();

    /**
     * How long shutdown waits for a built-in training job to reach the end of its current step and give its job back
     * (queued again, due at once for any replica). A step that takes longer leaves the job to the lease sweep.
     */
    @WithDefault("10s")
    Duration trainingGrace();
}
