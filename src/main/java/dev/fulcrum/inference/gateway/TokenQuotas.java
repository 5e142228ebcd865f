package dev.fulcrum.inference.gateway;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;

import org.jboss.logging.Logger;

import io.agroal.api.AgroalDataSource;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.scheduler.Scheduled;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import dev.fulcrum.inference.InferenceConfig;
import dev.fulcrum.inference.InferenceFailure;
import dev.fulcrum.platform.database.JdbcTransactions;
import dev.fulcrum.platform.errors.ApiException.Kind;

/**
 * Monthly token quotas of teams (entities), when configured, held cluster-wide through table
 * {@code inference_token_use}: the tokens each team's month counts against its quota, for all replicas together (begun
 * from the usage table the first time a month is touched). A team whose count is at or over its quota gets 402.
 * <p>
 * No database round trip per request: a replica takes a share of the team's remaining quota (at most
 * {@code fulcrum.inference.quota-chunk} tokens, and at most a quarter of what remains, at least one token), admits the
 * team's requests while its share lasts, and spends it in memory as completions end. A completion that ends past the
 * share adds the difference to the count at once (asynchronously); a share not used for
 * {@code fulcrum.inference.quota-refresh} is given back. So the count in the database is never less than what the team
 * used, minus completions that ended a moment ago, and a team that used its quota up through one replica is refused by
 * every replica. As on a single replica, completions already running may end past the quota. A replica that dies
 * holding a share leaves it counted for the rest of the month (at most a quarter of what remained).
 */
@Singleton
public class TokenQuotas {

    private static final Logger LOG = Logger.getLogger(TokenQuotas.class);
    /** A share is at most this part of what remains, so that other replicas find some left. */
    private static final int SHARE_OF_REMAINDER = 4;

    @Inject
    InferenceConfig config;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    Vertx vertx;

    /** This replica's share of one team's month. Guarded by itself. */
    private static final class Share {
        final String entity;
        final YearMonth month;
        /** Tokens taken from the count and not spent yet; negative: spent beyond the share, not yet counted. */
        long balance;
        long lastUseNanos = System.nanoTime();
        /** The exchange with the database in flight, if any (one at a time per share). */
        Future<Void> syncing;
        /** Whether {@link #syncing} asks for a new share. */
        boolean syncingTakes;

        Share(String entity, YearMonth month) {
            this.entity = entity;
            this.month = month;
        }
    }

    private final Map<String, Share> shares = new ConcurrentHashMap<>();

    /** Whether any quota is configured, for a team or for all. */
    public boolean configured() {
        return !config.teamMonthlyTokenQuotas().isEmpty() || config.monthlyTokenQuota().isPresent();
    }

    public OptionalLong quota(String entity) {
        Long team = config.teamMonthlyTokenQuotas().get(entity);
        return team != null ? OptionalLong.of(team) : config.monthlyTokenQuota();
    }

    /** Completes when the entity may use more tokens; fails with 402 when its quota is used up. */
    public Future<Void> check(String entity) {
        return onCallerContext(checkAnywhere(entity));
    }

    /** {@link #check}, completing on whichever thread ends the share's exchange (for a caller that waits for it). */
    Future<Void> checkAnywhere(String entity) {
        OptionalLong quota = quota(entity);
        if (quota.isEmpty()) {
            return Future.succeededFuture();
        }
        return admit(share(entity), quota.getAsLong());
    }

    private Share share(String entity) {
        YearMonth now = YearMonth.now(ZoneOffset.UTC);
        // a past month's share is simply dropped: that month is over
        return shares.compute(entity,
                (name, known) -> known != null && known.month.equals(now) ? known : new Share(name, now));
    }

    private Future<Void> admit(Share share, long quota) {
        Future<Void> sync;
        boolean takes;
        synchronized (share) {
            share.lastUseNanos = System.nanoTime();
            if (share.balance > 0) {
                return Future.succeededFuture();
            }
            if (share.syncing == null) {
                sync = startSync(share, quota, 0);
                takes = true;
            } else {
                sync = share.syncing;
                takes = share.syncingTakes;
            }
        }
        return sync.compose(done -> {
            synchronized (share) {
                if (share.balance > 0) {
                    return Future.succeededFuture();
                }
            }
            // only an exchange that asked for a share can tell that the quota is used up
            return takes ? Future.failedFuture(InferenceFailure.quotaExceeded()) : admit(share, quota);
        });
    }

    /**
     * Counts tokens of a completion that ended on this replica. Work admitted on another replica (a Tinker training
     * step whose worker answers here) finds no share here: it is counted as spent beyond a share of none.
     */
    public void add(String entity, long tokens) {
        if (tokens <= 0) {
            return;
        }
        Share share = quota(entity).isPresent() ? share(entity) : shares.get(entity);
        if (share == null) {
            return;
        }
        synchronized (share) {
            share.balance -= tokens;
            if (share.balance < 0 && share.syncing == null) {
                startSync(share, -1, 0);
            }
        }
    }

    /**
     * Starts the one exchange of the share with the database (holding its lock): it adds what was spent beyond the
     * share to the count, gives back {@code giveBack} tokens, and with {@code quota >= 0} takes a new share when the
     * count is below the quota.
     */
    private Future<Void> startSync(Share share, long quota, long giveBack) {
        long debt = Math.max(0, -share.balance);
        long delta = debt - giveBack;
        share.balance += delta;
        share.syncingTakes = quota >= 0;
        // assigned before the exchange starts: its end may come at once, and must find this one to clear
        Promise<Void> done = Promise.promise();
        share.syncing = done.future();
        vertx.<Long> executeBlocking(() -> write(share, delta, quota), false).onComplete(result -> {
            synchronized (share) {
                share.syncing = null;
                if (result.failed()) {
                    share.balance -= delta; // still to be written
                    LOG.warnf("Token quota count of %s not written: %s", share.entity, result.cause().toString());
                } else {
                    share.balance += result.result();
                    if (share.balance < 0) {
                        startSync(share, -1, 0); // completions ended meanwhile beyond the share
                    }
                }
            }
            if (result.failed()) {
                done.fail(new InferenceFailure(Kind.UNAVAILABLE, "Database unavailable", null, null, null));
            } else {
                done.complete();
            }
        });
        return done.future();
    }

    /** Adds {@code delta} to the count and takes a new share when asked and possible; the tokens taken. */
    private long write(Share share, long delta, long quota) throws SQLException {
        return JdbcTransactions.run(dataSource, connection -> {
            LocalDate month = share.month.atDay(1);
            long used = lockCount(connection, share.entity, month);
            long taken = 0;
            if (quota >= 0 && used + delta < quota) {
                taken = Math.min(config.quotaChunk(), Math.max(1, (quota - used - delta) / SHARE_OF_REMAINDER));
            }
            GatewayStatements.addToCount(connection, share.entity, month, delta + taken);
            return taken;
        });
    }

    /** The team's count of the month, locked until the transaction ends; begun from the usage table when new. */
    private static long lockCount(Connection connection, String entity, LocalDate month) throws SQLException {
        for (int attempt = 0; attempt < 2; attempt++) {
            Optional<Long> used = GatewayStatements.lockCount(connection, entity, month);
            if (used.isPresent()) {
                return used.get();
            }
            GatewayStatements.beginCount(connection, entity, month);
        }
        throw new SQLException("The token count of " + entity + " could not be created");
    }

    /** Gives back shares not used for {@code fulcrum.inference.quota-refresh}, so that other replicas can take them. */
    @Scheduled(every = "${fulcrum.inference.quota-refresh:10s}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    void giveBackIdle() {
        long now = System.nanoTime();
        YearMonth month = YearMonth.now(ZoneOffset.UTC);
        shares.values().removeIf(share -> !share.month.equals(month));
        for (Share share : shares.values()) {
            synchronized (share) {
                if (share.balance > 0 && share.syncing == null
                        && now - share.lastUseNanos >= config.quotaRefresh().toNanos()) {
                    startSync(share, -1, share.balance);
                }
            }
        }
    }

    /** Gives back every unused share when the replica stops (best effort: a crash leaves them counted). */
    void giveBackAll(@Observes ShutdownEvent stopping) {
        for (Share share : shares.values()) {
            synchronized (share) {
                if (share.syncing != null || share.balance == 0) {
                    continue;
                }
                long delta = -share.balance;
                share.balance = 0;
                try {
                    write(share, delta, -1);
                } catch (SQLException | RuntimeException e) {
                    LOG.warnf("Token quota share of %s not given back: %s", share.entity, e.toString());
                }
            }
        }
    }

    /** The future, completing on the context of the caller (a share's exchange may have been started by another). */
    private static <T> Future<T> onCallerContext(Future<T> future) {
        Context context = Vertx.currentContext();
        if (context == null || future.isComplete()) {
            return future;
        }
        Promise<T> here = Promise.promise();
        future.onComplete(result -> context.runOnContext(ignored -> here.handle(result)));
        return here.future();
    }
}
