package dev.fulcrum.inference;

import java.time.OffsetDateTime;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.control.ActivateRequestContext;
import jakarta.inject.Inject;
import jakarta.persistence.PersistenceException;

import io.vertx.core.Future;
import io.vertx.core.Vertx;

/**
 * Monthly token quotas of teams (entities), when configured. A team's use this month (UTC) is read from the usage table
 * on a worker thread, trusted for {@code fulcrum.inference.quota-refresh}, and counted up in memory as this replica's
 * completions end; a team at or over its quota gets 402. Enforcement is therefore close, not exact: completions already
 * running may end past the quota, and other replicas' use shows after the refresh.
 */
@ApplicationScoped
public class TokenQuotas {

    @Inject
    InferenceConfig config;

    @Inject
    Vertx vertx;

    private record Month(YearMonth month, AtomicLong used, long readNanos) {
    }

    private final Map<String, Month> months = new ConcurrentHashMap<>();

    public OptionalLong quota(String entity) {
        Long team = config.teamMonthlyTokenQuotas().get(entity);
        return team != null ? OptionalLong.of(team) : config.monthlyTokenQuota();
    }

    /** Completes when the entity may use more tokens; fails with 402 when its quota is used up. */
    public Future<Void> check(String entity) {
        OptionalLong quota = quota(entity);
        if (quota.isEmpty()) {
            return Future.succeededFuture();
        }
        YearMonth now = YearMonth.now(ZoneOffset.UTC);
        Month month = months.get(entity);
        if (month != null && month.month().equals(now)
                && System.nanoTime() - month.readNanos() < config.quotaRefresh().toNanos()) {
            return decide(month.used().get(), quota.getAsLong());
        }
        return vertx.executeBlocking(() -> {
            long used = read(entity, now);
            months.put(entity, new Month(now, new AtomicLong(used), System.nanoTime()));
            return used;
        }, false).compose(used -> decide(used, quota.getAsLong()));
    }

    /** Counts tokens of a completion that ended on this replica. */
    public void add(String entity, long tokens) {
        Month month = months.get(entity);
        if (month != null && tokens > 0) {
            month.used().addAndGet(tokens);
        }
    }

    private static Future<Void> decide(long used, long quota) {
        return used >= quota ? Future.failedFuture(InferenceFailure.quotaExceeded()) : Future.succeededFuture();
    }

    /** This month's use of the entity, read on a Vert.x worker (in a request context of its own). */
    @ActivateRequestContext
    long read(String entity, YearMonth month) {
        try {
            return InferenceUsage.tokensSince(entity, OffsetDateTime.of(month.atDay(1).atStartOfDay(), ZoneOffset.UTC));
        } catch (PersistenceException e) {
            throw new InferenceFailure(503, "Database unavailable", null, null, null);
        }
    }
}
