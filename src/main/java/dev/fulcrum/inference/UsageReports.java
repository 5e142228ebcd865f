package dev.fulcrum.inference;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import io.agroal.api.AgroalDataSource;

import dev.fulcrum.inference.api.model.InferenceUsageReport;
import dev.fulcrum.inference.api.model.InferenceUsageRow;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;

/**
 * Token usage of an entity (optionally one project) in a time range, by model or by day (UTC), with the time the
 * requests took inside Fulcrum (median, 99th percentile, longest).
 */
@ApplicationScoped
public class UsageReports {

    @Inject
    AgroalDataSource dataSource;

    /** A checked usage query. */
    public record Query(String entity, String project, OffsetDateTime from, OffsetDateTime to, String groupBy) {

        public static Query of(String entity, String project, String from, String to, String groupBy) {
            List<Violation> violations = new ArrayList<>();
            String group = groupBy == null ? "model" : groupBy;
            if (!group.equals("model") && !group.equals("day")) {
                violations.add(Violation.of("Must be model or day", "enum", "query", "group_by"));
            }
            OffsetDateTime now = OffsetDateTime.now(ZoneOffset.UTC);
            OffsetDateTime start = time(from, "from", violations, now.minusDays(30));
            OffsetDateTime end = time(to, "to", violations, now);
            if (violations.isEmpty() && !start.isBefore(end)) {
                violations.add(Violation.of("Must be before 'to'", "value_error", "query", "from"));
            }
            if (!violations.isEmpty()) {
                throw ApiException.invalid(violations);
            }
            return new Query(entity, project, start, end, group);
        }

        private static OffsetDateTime time(String value, String name, List<Violation> violations,
                OffsetDateTime otherwise) {
            if (value == null || value.isBlank()) {
                return otherwise;
            }
            try {
                if (value.length() == 10) {
                    return LocalDate.parse(value).atStartOfDay().atOffset(ZoneOffset.UTC);
                }
                return OffsetDateTime.parse(value);
            } catch (DateTimeParseException e) {
                violations.add(Violation.of("Must be a date (2026-01-31) or a date-time with offset", "value_error",
                        "query", name));
                return otherwise;
            }
        }
    }

    public InferenceUsageReport report(Query query) {
        String key = query.groupBy().equals("day") ? "to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')" : "model";
        String sql = "select " + key + " as k, count(*), count(*) filter (where status >= 400),"
                + " coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),"
                + " percentile_disc(0.5) within group (order by latency_ms),"
                + " percentile_disc(0.99) within group (order by latency_ms), max(latency_ms)"
                + " from inference_usage where entity = ? and created_at >= ? and created_at < ?"
                + (query.project() == null ? "" : " and project = ?") + " group by k order by k";
        InferenceUsageReport report = new InferenceUsageReport().entity(query.entity()).project(query.project())
                .from(query.from()).to(query.to()).groupBy(query.groupBy()).data(new ArrayList<>());
        try (Connection connection = dataSource.getConnection();
                PreparedStatement select = connection.prepareStatement(sql)) {
            select.setString(1, query.entity());
            select.setObject(2, query.from());
            select.setObject(3, query.to());
            if (query.project() != null) {
                select.setString(4, query.project());
            }
            try (ResultSet rs = select.executeQuery()) {
                while (rs.next()) {
                    long prompt = rs.getLong(4);
                    long completion = rs.getLong(5);
                    report.addDataItem(new InferenceUsageRow().key(rs.getString(1)).requests(rs.getLong(2))
                            .failedRequests(rs.getLong(3)).promptTokens(prompt).completionTokens(completion)
                            .totalTokens(prompt + completion).latencyMsP50(rs.getInt(6)).latencyMsP99(rs.getInt(7))
                            .latencyMsMax(rs.getInt(8)));
                }
            }
        } catch (SQLException e) {
            throw new ApiException(503, "Database unavailable");
        }
        return report;
    }
}
