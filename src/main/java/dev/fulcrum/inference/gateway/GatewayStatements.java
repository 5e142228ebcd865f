package dev.fulcrum.inference.gateway;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;

import javax.sql.DataSource;

import dev.fulcrum.platform.database.NativeSql;

/**
 * The gateway's cluster-wide state in SQL, on the connections its services open (outside any request's transaction):
 * the concurrency slot leases of {@link ConcurrencyLimits} ({@code inference_slot_leases}), the token counts of
 * {@link TokenQuotas} ({@code inference_token_use}) and the usage rows {@link UsageRecorder} copies in
 * ({@code inference_usage}).
 */
final class GatewayStatements {

    private GatewayStatements() {
    }

    /** Waits for the transaction-scoped advisory lock of a project's slots. */
    static void lockSlots(Connection connection, int locks, String project) throws SQLException {
        NativeSql.first(connection, "select pg_advisory_xact_lock(?1, hashtext(?2))", row -> row, locks, project);
    }

    /** The project's slots other replicas hold in unexpired leases. */
    static long othersHeld(Connection connection, String entity, String project, String replica) throws SQLException {
        return NativeSql.first(connection, """
                select coalesce(sum(held), 0) from inference_slot_leases
                where entity = ?1 and project = ?2 and replica <> ?3 and expires_at > now()""", row -> row.longValue(0),
                entity, project, replica).orElse(0L);
    }

    /** Sets this replica's lease of the project to {@code held} slots for {@code lease} (an interval's text). */
    static void lease(Connection connection, String entity, String project, String replica, int held, String lease)
            throws SQLException {
        NativeSql.update(connection, """
                insert into inference_slot_leases (entity, project, replica, held, expires_at)
                values (?1, ?2, ?3, ?4, now() + cast(?5 as interval))
                on conflict (entity, project, replica)
                do update set held = excluded.held, expires_at = excluded.expires_at""", entity, project, replica, held,
                lease);
    }

    /** Renews this replica's leases for {@code lease}, and forgets leases that expired an hour ago. */
    static void renew(Connection connection, String replica, String lease) throws SQLException {
        NativeSql.update(connection,
                "update inference_slot_leases set expires_at = now() + cast(?1 as interval) where replica = ?2", lease,
                replica);
        NativeSql.update(connection, "delete from inference_slot_leases where expires_at < now() - interval '1 hour'");
    }

    /** Drops this replica's leases. */
    static void giveBackAll(Connection connection, String replica) throws SQLException {
        NativeSql.update(connection, "delete from inference_slot_leases where replica = ?1", replica);
    }

    /** The team's count of the month, locked until the transaction ends; empty when it has none yet. */
    static Optional<Long> lockCount(Connection connection, String entity, LocalDate month) throws SQLException {
        return NativeSql.first(connection,
                "select used from inference_token_use where entity = ?1 and month = ?2 for update",
                row -> row.longValue(0), entity, month);
    }

    /** Begins the team's count of the month from the usage table (nothing if another began it). */
    static void beginCount(Connection connection, String entity, LocalDate month) throws SQLException {
        NativeSql.update(connection, """
                insert into inference_token_use (entity, month, used)
                select ?1, ?2, coalesce(sum(prompt_tokens + completion_tokens), 0) from inference_usage
                where entity = ?1 and created_at >= ?3
                on conflict do nothing""", entity, month, OffsetDateTime.of(month.atStartOfDay(), ZoneOffset.UTC));
    }

    /** Adds {@code tokens} to the team's count of the month. */
    static void addToCount(Connection connection, String entity, LocalDate month, long tokens) throws SQLException {
        NativeSql.update(connection, "update inference_token_use set used = used + ?1 where entity = ?2 and month = ?3",
                tokens, entity, month);
    }

    /** Copies usage rows (PostgreSQL's binary copy format) in. */
    static void copyUsage(DataSource dataSource, byte[] data) throws SQLException {
        NativeSql.copyIn(dataSource, """
                copy inference_usage (created_at, entity, project, user_id, model, prompt_tokens,
                    completion_tokens, latency_ms, status, kind) from stdin (format binary)""", data);
    }
}
