package dev.fulcrum.automations;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/** Outgoing webhook requests and their delivery ({@code fulcrum.webhooks.*}). */
@ConfigMapping(prefix = "fulcrum.webhooks")
public interface WebhooksConfig {

    /** Accept {@code http://} endpoint URLs (otherwise only {@code https://}). */
    @WithDefault("false")
    boolean allowHttp();

    /**
     * CIDR blocks that endpoints may resolve to although the SSRF guard refuses them otherwise (loopback, private,
     * link-local, ...), e.g. {@code 10.20.0.0/16,127.0.0.1/32}.
     */
    Optional<List<String>> allowedNetworks();

    /**
     * Delay before each attempt: the first entry before the first attempt, and so on; the number of entries is the
     * number of attempts. After the last one the delivery is {@code failed}.
     */
    @WithDefault("0s,5s,5m,30m,2h,5h,10h,10h")
    List<Duration> retrySchedule();

    /** Each retry delay is varied by up to this fraction either way. */
    @WithDefault("0.2")
    double retryJitter();

    /** A {@code Retry-After} answer is honoured up to this delay. */
    @WithDefault("1h")
    Duration maxRetryAfter();

    /** Time to establish the connection. */
    @WithDefault("5s")
    Duration connectTimeout();

    /** Time for one attempt as a whole (connect, send, answer). */
    @WithDefault("15s")
    Duration requestTimeout();

    /** How long a claimed delivery stays with its claimer; afterwards another dispatcher takes it again. */
    @WithDefault("60s")
    Duration lease();

    /** How often each replica looks for due deliveries that no commit in this replica announced. */
    @WithDefault("1s")
    Duration pollInterval();

    /** Deliveries claimed in one transaction. */
    @WithDefault("200")
    int claimBatch();

    /** Requests in flight at once per replica. */
    @WithDefault("512")
    int maxInFlight();

    /** Pooled connections per endpoint (keep-alive). */
    @WithDefault("64")
    int maxConnectionsPerEndpoint();

    /**
     * The Slack Web API that Slack integrations post their notifications to ({@code <url>/chat.postMessage}). It goes
     * through the SSRF guard like a webhook's URL: a Slack stand-in on a private or loopback address needs
     * {@code allowed-networks}, on {@code http://} {@code allow-http}.
     */
    @WithDefault("https://slack.com/api")
    String slackApiUrl();

    /** Where Slack integrations post: {@code chat.postMessage} of {@link #slackApiUrl}. */
    default String slackPostMessageUrl() {
        String base = slackApiUrl();
        return (base.endsWith("/") ? base : base + "/") + "chat.postMessage";
    }

    /** The part of a response body kept in the delivery log and shown by a test. */
    @WithDefault("4096")
    int maxResponseBodyBytes();
}
