package dev.fulcrum.inference.gateway;

import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.PersistenceException;

import dev.fulcrum.inference.api.model.InferenceUsageReport;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Token usage of an entity (optionally one project) in a time range, by model, by day (UTC) or by both, with the time
 * the requests took inside Fulcrum (median, 99th percentile, longest).
 */
@ApplicationScoped
public class UsageReports {

    @Inject
    InferenceStatements statements;

    /** A checked usage query. */
    public record Query(String entity, String project, OffsetDateTime from, OffsetDateTime to, String groupBy) {

        public static Query of(String entity, String project, String from, String to, String groupBy) {
            List<Violation> violations = new ArrayList<>();
            String group = groupBy == null ? "model" : groupBy;
            if (!group.equals("model") && !group.equals("day") && !group.equals("day_model")) {
                violations.add(Violation.of("Must be model, day or day_model", "enum", "query", "group_by"));
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
                OffsetDateTime time = value.length() == 10
                        ? LocalDate.parse(value).atStartOfDay().atOffset(ZoneOffset.UTC)
                        : OffsetDateTime.parse(value);
                // ISO reaches the year 999,999,999; PostgreSQL's timestamps and a browser's date field do not
                if (time.getYear() < 1 || time.getYear() > 9999) {
                    violations.add(Violation.of("Must be within the years 1 to 9999", "value_error", "query", name));
                    return otherwise;
                }
                return time;
            } catch (DateTimeParseException e) {
                violations.add(Violation.of("Must be a date (2026-01-31) or a date-time with offset", "value_error",
                        "query", name));
                return otherwise;
            }
        }
    }

    public InferenceUsageReport report(Query query) {
        InferenceUsageReport report = new InferenceUsageReport().entity(query.entity()).project(query.project())
                .from(query.from()).to(query.to()).groupBy(query.groupBy()).data(new ArrayList<>());
        try {
            statements.usage(query).forEach(report::addDataItem);
        } catch (PersistenceException e) {
            throw ApiException.unavailable("Database unavailable");
        }
        return report;
    }
}
