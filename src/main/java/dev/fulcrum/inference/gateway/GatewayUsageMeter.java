package dev.fulcrum.inference.gateway;

import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.inference.UsageMeter;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Kind;

/**
 * The usage and quotas of Tinker work, in the completions' pipeline: the same usage records ({@link UsageRecorder},
 * with their kind) and the same monthly token quotas ({@link TokenQuotas}).
 */
@Singleton
public class GatewayUsageMeter implements UsageMeter {

    /** Longest wait for this replica's share of a quota (one short transaction, normally milliseconds). */
    private static final long ADMIT_SECONDS = 30;

    @Inject
    TokenQuotas quotas;

    @Inject
    UsageRecorder usage;

    @Override
    public boolean quotas() {
        return quotas.configured();
    }

    @Override
    public void admit(String entity) {
        try {
            quotas.checkAnywhere(entity).toCompletionStage().toCompletableFuture().get(ADMIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof InferenceFailure failure && failure.kind() == Kind.QUOTA_EXCEEDED) {
                throw ApiException.quotaExceeded(failure.getMessage());
            }
            throw ApiException.unavailable("Database unavailable");
        } catch (TimeoutException e) {
            throw ApiException.unavailable("The token quota could not be read in time");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ApiException.unavailable("Interrupted");
        }
    }

    @Override
    public void record(Use use) {
        quotas.add(use.entity(), (long) use.promptTokens() + use.completionTokens());
        usage.record(new UsageRecorder.Usage(OffsetDateTime.now(ZoneOffset.UTC), use.entity(), use.project(),
                use.userId(), use.model(), use.promptTokens(), use.completionTokens(), use.latencyMs(), use.status(),
                use.kind()));
    }
}
