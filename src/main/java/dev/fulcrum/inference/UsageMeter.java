package dev.fulcrum.inference;

/**
 * Usage and monthly token quotas of work that is not a request of the gateway: the Tinker API's samples and training
 * steps. The same usage records and quotas as completions ({@code /api/v1/usage} shows them, told apart by their
 * {@link Use#kind()}), through a contract so that the Tinker API knows no part of the gateway.
 */
public interface UsageMeter {

    /** A completion, embedding or response of the gateway. */
    String COMPLETION = "completion";
    /** A sample of a Tinker sampling client. */
    String TINKER_SAMPLE = "tinker_sample";
    /** The tokens of a Tinker {@code forward} or {@code forward_backward}. */
    String TINKER_TRAIN = "tinker_train";

    /** One piece of work's usage, counted for {@code entity}'s quota and the project's usage. */
    record Use(String kind, String entity, String project, long userId, String model, int promptTokens,
            int completionTokens, int latencyMs, int status) {
    }

    /** Whether any monthly token quota is configured: without one, {@link #admit} has nothing to check. */
    boolean quotas();

    /**
     * Returns when the entity may use more tokens; an {@code ApiException} of kind {@code QUOTA_EXCEEDED} (402) when
     * its monthly token quota is used up. Blocks while this replica takes a share of the quota: call it on a worker
     * thread, never an event loop.
     */
    void admit(String entity);

    /** Records the usage (written in batches, as completions') and counts its tokens against the entity's quota. */
    void record(Use use);
}
