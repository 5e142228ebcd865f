package dev.fulcrum.traces;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import jakarta.annotation.PostConstruct;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.agroal.api.AgroalDataSource;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.datasets.WeaveObjects;
import dev.fulcrum.datasets.api.model.CallSortBy;
import dev.fulcrum.datasets.api.model.CallsFilter;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Reads of Weave's calls: one call, a page of a query (filters, the query language, sort, limit and offset in SQL over
 * the indexes of V77) and a query's count; their statements are {@link CallQueryStatements}'.
 */
@ApplicationScoped
public class CallQueries {

    static final List<String> COLUMNS = List.of("id", "project_id", "op_name", "display_name", "trace_id", "parent_id",
            "thread_id", "turn_id", "started_at", "ended_at", "exception", "attributes", "inputs", "output", "summary",
            "wb_user_id", "wb_run_id", "wb_run_step", "wb_run_step_end", "deleted_at");
    private static final Set<String> ALWAYS = Set.of("id", "project_id", "trace_id", "op_name", "started_at");
    private static final Set<String> ALL = Set.copyOf(COLUMNS);

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    AgroalDataSource dataSource;

    @Inject
    ObjectMapper json;

    private CallJson calls;

    @PostConstruct
    void answers() {
        calls = new CallJson(json);
    }

    /** What a query asks for; {@code feedback}: each call's feedback in {@code summary.weave.feedback}. */
    public record Query(CallsFilter filter, JsonNode expr, List<CallSortBy> sortBy, Integer limit, Integer offset,
            boolean feedback) {
    }

    /*
     * call/read and calls/stream_query run one statement, outside any transaction (a single statement is its own short
     * implicit one) on a pooled connection: the caller's stored role on the entity, the project, and the calls, the
     * calls only when the caller may read them. The answer is written straight from the result set. A page of 100 over
     * 1,000,000 calls spent most of its time outside its 1.7 ms statement when it went through a JTA transaction (a
     * commit round trip), a statement of its own for the access check and a record per call (bench/README.md,
     * "Weave calls").
     */

    /** {@code {"call": call}}, or {@code {"call": null}} when the project has no such call. */
    public byte[] read(WeaveObjects.ProjectName name, String id) {
        List<Object> params = readable(name);
        String call = CallQueryStatements.call(params, id);
        return readOnly(name, call, params, null, (results, out) -> {
            out.writeStartObject();
            out.writeFieldName("call");
            if (results.string(CallQueryStatements.CALL) != null) {
                calls.write(results, CallQueryStatements.CALL, name.id(), ALL, null, out);
            } else {
                out.writeNull();
            }
            out.writeEndObject();
        });
    }

    /** The calls a query selects, in its order, as JSON Lines: one call (its {@code columns}) per line. */
    public byte[] query(WeaveObjects.ProjectName name, Query query, Set<String> columns) {
        List<Object> params = readable(name);
        String page = null;
        ApiException invalid = null;
        try {
            page = CallQueryStatements.page(params, query, name);
        } catch (ApiException e) {
            invalid = e; // answered once the caller's access is known, as a 403 or 404 comes first
        }
        return readOnly(name, page, params, invalid, (results, out) -> {
            // one generator for the whole page: each call a root value ending in its own newline, with no
            // separator of Jackson's between them
            out.setRootValueSeparator(null);
            if (results.string(CallQueryStatements.CALL) != null) {
                do {
                    String feedback = query.feedback() ? results.string(CallQueryStatements.CALL + CallJson.COUNT)
                            : null;
                    calls.write(results, CallQueryStatements.CALL, name.id(), columns,
                            query.feedback() && feedback == null ? "[]" : feedback, out);
                    out.writeRaw('\n');
                } while (results.next());
            }
        });
    }

    /** How many calls a query selects. */
    @Transactional
    public long count(WeaveObjects.ProjectName name, Query query) {
        ProjectRef ref = access.readableProject(name.entity(), name.project());
        return CallQueryStatements.count(em, ref.projectId(), query);
    }

    /**
     * Which of the call's columns a query's {@code columns} keeps (all when null or empty); with {@code feedback} the
     * summary too, where the feedback is.
     */
    static Set<String> columns(List<String> requested, boolean feedback) {
        if (requested == null || requested.isEmpty()) {
            return ALL;
        }
        Set<String> kept = new java.util.HashSet<>(ALWAYS);
        if (feedback) {
            kept.add("summary");
        }
        for (String column : requested) {
            // nested columns (inputs.x, summary.weave.status) keep their top-level column
            String top = column.contains(".") ? column.substring(0, column.indexOf('.')) : column;
            if (COLUMNS.contains(top)) {
                kept.add(top);
            }
        }
        return kept;
    }

    /** The parameters of the caller's access ({@link CallQueryStatements#read}), the first of a read's statement. */
    private List<Object> readable(WeaveObjects.ProjectName name) {
        Caller caller = access.caller();
        return new ArrayList<>(List.of(caller.userId(), name.project(), name.entity(), caller.admin()));
    }

    /** Writes what a statement selected, from its first row on (a row without a call when none was selected). */
    private interface Answer {
        void write(NativeSql.Cursor results, JsonGenerator out) throws SQLException, IOException;
    }

    /**
     * The caller's access and the calls {@code calls} selects ({@code params} those of both), in one statement; answers
     * what {@code answer} wrote, once the caller may read the project (403 or 404 otherwise, and before
     * {@code invalid}, a refusal of the request that left no statement to run). The answer is written whole before it
     * is sent, so that the connection goes back to the pool at once however slowly the client reads, and a failure is
     * still an error in the interface's shape.
     */
    private byte[] readOnly(WeaveObjects.ProjectName name, String calls, List<Object> params, ApiException invalid,
            Answer answer) {
        try {
            return CallQueryStatements.read(dataSource, invalid == null ? calls : null, params, results -> {
                if (!results.next()) {
                    throw ApiException.notFound("Entity " + name.entity() + " not found");
                }
                Long projectId = results.longValue(2);
                access.authorize(name.entity(), name.project(), results.longValue(0), projectId, results.string(1),
                        Role.VIEWER);
                if (projectId == null) {
                    throw ApiException.notFound("Project " + name.entity() + "/" + name.project() + " not found");
                }
                if (invalid != null) {
                    throw invalid;
                }
                ByteArrayOutputStream bytes = new ByteArrayOutputStream(16 * 1024);
                try (JsonGenerator out = json.getFactory().createGenerator(bytes)) {
                    answer.write(results, out);
                }
                return bytes.toByteArray();
            });
        } catch (SQLException e) {
            throw ApiException.unavailable("Database unavailable");
        } catch (IOException e) {
            throw new UncheckedIOException("Calls could not be written as JSON", e);
        }
    }

}
