package dev.fulcrum.inference.gateway;

import java.time.LocalDate;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;

import dev.fulcrum.inference.UsageMeter;
import dev.fulcrum.inference.api.model.InferenceUsageRow;
import dev.fulcrum.platform.database.NativeSql;

/**
 * The inference SQL kept native: the usage report (percentiles within a group and days in UTC are PostgreSQL's
 * aggregates).
 */
@ApplicationScoped
class InferenceStatements {

    @Inject
    EntityManager em;

    /**
     * Requests, failures, tokens and latencies of an entity (optionally one project) by model, UTC day or both, and by
     * kind of work: completions, Tinker samples, Tinker training (a row of each that has usage).
     */
    List<InferenceUsageRow> usage(UsageReports.Query query) {
        String day = "to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')";
        String groups = switch (query.groupBy()) {
            case "day" -> day + ", null::text";
            case "day_model" -> day + ", model";
            default -> "null::text, model";
        };
        String sql = "select " + groups + ", kind, count(*), count(*) filter (where status >= 400),"
                + " coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0),"
                + " percentile_disc(0.5) within group (order by latency_ms),"
                + " percentile_disc(0.99) within group (order by latency_ms), max(latency_ms)"
                + " from inference_usage where entity = ?1 and created_at >= ?2 and created_at < ?3"
                + (query.project() == null ? "" : " and project = ?4") + " group by 1, 2, 3 order by 1, 2, 3";
        Object[] params = query.project() == null ? new Object[] { query.entity(), query.from(), query.to() }
                : new Object[] { query.entity(), query.from(), query.to(), query.project() };
        return NativeSql.list(em, sql, row -> {
            String dayKey = row.string(0);
            String model = row.string(1);
            String kind = row.string(2);
            long prompt = row.longValue(5);
            long completion = row.longValue(6);
            String key = dayKey == null ? model : model == null ? dayKey : dayKey + " " + model;
            if (!kind.equals(UsageMeter.COMPLETION)) {
                key += " " + kind;
            }
            return new InferenceUsageRow().key(key).model(model).day(dayKey == null ? null : LocalDate.parse(dayKey))
                    .kind(InferenceUsageRow.KindEnum.fromValue(kind)).requests(row.longValue(3))
                    .failedRequests(row.longValue(4)).promptTokens(prompt).completionTokens(completion)
                    .totalTokens(prompt + completion).latencyMsP50(row.intValue(7)).latencyMsP99(row.intValue(8))
                    .latencyMsMax(row.intValue(9));
        }, params);
    }
}
