package dev.fulcrum.traces;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import jakarta.persistence.EntityManager;

import com.fasterxml.jackson.databind.JsonNode;

import dev.fulcrum.datasets.api.model.FeedbackCreateReq;
import dev.fulcrum.datasets.api.model.FeedbackSortBy;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.json.CanonicalJson;

/**
 * The SQL of Weave's feedback ({@link WeaveFeedback}) in {@code weave_feedback}: its insert, a query (Weave's query
 * language through {@link ExpressionStatements}, sort, limit and offset) and a purge.
 */
final class FeedbackStatements {

    /** The fields a query may read or sort by. */
    static final Map<String, ExpressionStatements.Column> QUERYABLE = Map.of("payload.*",
            new ExpressionStatements.Column("payload", false), "id", new ExpressionStatements.Column("id", false),
            "weave_ref", new ExpressionStatements.Column("weave_ref", false), "feedback_type",
            new ExpressionStatements.Column("feedback_type", false), "wb_user_id",
            new ExpressionStatements.Column("wb_user_id", false), "creator",
            new ExpressionStatements.Column("creator", false), "call_ref",
            new ExpressionStatements.Column("call_ref", false), "runnable_ref",
            new ExpressionStatements.Column("runnable_ref", false), "created_at",
            new ExpressionStatements.Column("created_at", true));

    private FeedbackStatements() {
    }

    /** Stores an item as {@code id} in the project, by {@code user} at {@code now}; nothing when the id is stored. */
    static int insert(EntityManager em, long projectId, String id, FeedbackCreateReq f, String user,
            OffsetDateTime now) {
        return NativeSql.update(em, """
                insert into weave_feedback (project_id, id, weave_ref, feedback_type, payload, creator,
                    annotation_ref, runnable_ref, call_ref, trigger_ref, wb_user_id, created_at)
                values (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) on conflict do nothing""", projectId, id,
                f.getWeaveRef(), f.getFeedbackType(), CanonicalJson.writeInOrder(f.getPayload()), text(f.getCreator()),
                text(f.getAnnotationRef()), text(f.getRunnableRef()), text(f.getCallRef()), text(f.getTriggerRef()),
                user, now);
    }

    /**
     * The project's feedback matched by {@code expr}, in the order asked (then by creation and id), each row
     * ({@code id, weave_ref, feedback_type, payload, creator, annotation_ref, runnable_ref, call_ref, trigger_ref,
     * wb_user_id, created_at}) read by {@code mapper}.
     */
    static <T> List<T> query(EntityManager em, long projectId, JsonNode expr, List<FeedbackSortBy> sortBy,
            Integer limit, Integer offset, Function<NativeSql.Row, T> mapper) {
        List<Object> params = new ArrayList<>();
        StringBuilder sql = new StringBuilder("""
                select id, weave_ref, feedback_type, payload, creator, annotation_ref, runnable_ref, call_ref,
                       trigger_ref, wb_user_id, created_at
                from weave_feedback where project_id = ?1""");
        params.add(projectId);
        appendExpr(sql, params, expr);
        sql.append(" order by ");
        if (sortBy != null) {
            for (int i = 0; i < sortBy.size(); i++) {
                ExpressionStatements.Column column = QUERYABLE.get(sortBy.get(i).getField().toString());
                if (column == null) {
                    throw ApiException.invalid(Violation.of(
                            "Sortable fields: " + String.join(", ", new java.util.TreeSet<>(QUERYABLE.keySet())),
                            "value_error", "body", "sort_by", i, "field"));
                }
                sql.append(column.sql()).append(
                        sortBy.get(i).getDirection() == FeedbackSortBy.DirectionEnum.DESC ? " desc, " : " asc, ");
            }
        }
        sql.append("created_at asc, id asc");
        int max = limit == null ? CallQueryStatements.MAX_PAGE : limit;
        if (max > CallQueryStatements.MAX_PAGE) {
            throw ApiException.invalid(Violation.of("At most " + CallQueryStatements.MAX_PAGE + " items per query",
                    "less_than_equal", "body", "limit"));
        }
        sql.append(" limit ").append(NativeSql.param(params, max)).append(" offset ")
                .append(NativeSql.param(params, offset == null ? 0 : offset));
        return NativeSql.list(em, sql.toString(), mapper, params.toArray());
    }

    /** Deletes the project's feedback matched by {@code expr}; answers how many. */
    static int purge(EntityManager em, long projectId, JsonNode expr) {
        List<Object> params = new ArrayList<>();
        StringBuilder sql = new StringBuilder("delete from weave_feedback where project_id = ?1");
        params.add(projectId);
        appendExpr(sql, params, expr);
        return NativeSql.update(em, sql.toString(), params.toArray());
    }

    private static void appendExpr(StringBuilder sql, List<Object> params, JsonNode expr) {
        if (expr != null && !expr.isNull()) {
            sql.append(" and (").append(ExpressionStatements.compile(expr, QUERYABLE, params, "body", "query", "$expr"))
                    .append(")");
        }
    }

    /** A text that may be null, with its type. */
    private static NativeSql.Typed<String> text(String value) {
        return NativeSql.typed(value, String.class);
    }
}
