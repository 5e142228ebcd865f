package dev.fulcrum.runs;

import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import org.hibernate.Session;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.re2j.PatternSyntaxException;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents;
import dev.fulcrum.events.PlatformEvents.Scope;
import dev.fulcrum.platform.ApiException;
import dev.fulcrum.platform.ApiException.Violation;
import dev.fulcrum.platform.QueryParams;
import dev.fulcrum.platform.StoredJson;

/**
 * Runs and their metric history. Logging a batch locks the run row (so concurrent batches of one run get distinct,
 * ordered sequence numbers), inserts all rows with one statement over arrays, merges the last values into the summary
 * and writes one {@code RUN_METRIC} event, all in one transaction.
 */
@ApplicationScoped
public class RunService {

    static final int MAX_LIMIT = 10_000;

    public static final Set<String> STATES = Set.of("running", "finished", "failed", "crashed", "killed");
    public static final int MAX_BATCH_ROWS = 10_000;
    public static final int MAX_KEY_LENGTH = 256;
    public static final int MAX_DISPLAY_NAME = 256;
    static final String STEP = "_step";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
    private static final String NAME_RULE = "Must be 1 to 128 letters, digits, '_', '.' or '-', starting with a letter or digit";
    private static final char[] ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String RUN_COLUMNS = """
            r.id, r.name, r.display_name, r.config::text, r.state, u.username, r.created_at, r.updated_at,
            r.last_step, r.row_count from runs r left join users u on u.id = r.created_by""";

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    PlatformEvents events;

    public record RunView(long id, String name, String displayName, ObjectNode config, String state, String createdBy,
            OffsetDateTime createdAt, OffsetDateTime updatedAt, long lastStep, long historyRows, String entity,
            String project) {
    }

    public record Logged(int rows, long values, long lastStep) {
    }

    public record Page<T>(List<T> items, Integer nextOffset) {
    }

    @Transactional
    public RunView create(String entity, String project, String name, String displayName, ObjectNode config) {
        if (name != null) {
            requireName(name, "body", "name");
        }
        requireDisplayName(displayName);
        if (config != null && !isFinite(config)) {
            throw ApiException.invalid(Violation.of("Numbers must be finite", "finite_number", "body", "config"));
        }
        ProjectRef ref = access.writableProject(entity, project);
        String runName = name != null ? name : randomName();
        String configText = storedJson.write(config == null ? JsonNodeFactory.instance.objectNode() : config);
        boolean inserted = jdbc(connection -> {
            try (PreparedStatement insert = connection.prepareStatement("""
                    insert into runs (project_id, name, display_name, config, created_by)
                    values (?, ?, ?, ?::jsonb, ?) on conflict (project_id, name) do nothing""")) {
                insert.setLong(1, ref.projectId());
                insert.setString(2, runName);
                insert.setString(3, displayName);
                insert.setString(4, configText);
                insert.setLong(5, access.caller().userId());
                return insert.executeUpdate() == 1;
            }
        });
        if (!inserted) {
            throw ApiException.conflict("Run " + runName + " exists in " + entity + "/" + project);
        }
        return find(ref, runName, false);
    }

    /** Deletes the run and its history; false if there was no such run. */
    @Transactional
    public boolean delete(String entity, String project, String run) {
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        return jdbc(connection -> {
            try (PreparedStatement delete = connection
                    .prepareStatement("delete from runs where project_id = ? and name = ?")) {
                delete.setLong(1, ref.projectId());
                delete.setString(2, run);
                return delete.executeUpdate() == 1;
            }
        });
    }

    @Transactional
    public RunView get(String entity, String project, String run) {
        requireName(run, "path", "run");
        return find(access.readableProject(entity, project), run, false);
    }

    /** Changes state and display name; a change of state writes a {@code RUN_STATE} event. */
    @Transactional
    public RunView update(String entity, String project, String run, String state, String displayName) {
        requireName(run, "path", "run");
        if (state != null && !STATES.contains(state)) {
            throw ApiException.invalid(
                    Violation.of("Must be one of running, finished, failed, crashed, killed", "enum", "body", "state"));
        }
        requireDisplayName(displayName);
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        RunView before = find(ref, run, true);
        String newState = state == null ? before.state() : state;
        String newDisplayName = displayName == null ? before.displayName() : displayName;
        jdbc(connection -> {
            try (PreparedStatement update = connection
                    .prepareStatement("update runs set state = ?, display_name = ?, updated_at = now() where id = ?")) {
                update.setString(1, newState);
                update.setString(2, newDisplayName);
                update.setLong(3, before.id());
                return update.executeUpdate();
            }
        });
        if (!newState.equals(before.state())) {
            ObjectNode payload = payload(before);
            payload.put("state", newState);
            payload.put("previous_state", before.state());
            Caller caller = access.caller();
            events.record(EventType.RUN_STATE, Scope.project(ref.projectId()), caller.userId(), caller.username(),
                    payload);
        }
        return find(ref, run, false);
    }

    /** Stores a batch of metric rows; every value must be a number, {@code _step} a non-negative integer. */
    @Transactional
    public Logged log(String entity, String project, String run, List<ObjectNode> rows) {
        requireName(run, "path", "run");
        long values = validate(rows);
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        RunView locked = find(ref, run, true);
        long lastStep = locked.lastStep();
        long[] steps = new long[rows.size()];
        long[] seqs = new long[rows.size()];
        String[] texts = new String[rows.size()];
        ObjectNode last = JsonNodeFactory.instance.objectNode();
        ArrayNode logged = JsonNodeFactory.instance.arrayNode(rows.size());
        for (int i = 0; i < rows.size(); i++) {
            ObjectNode row = rows.get(i);
            JsonNode given = row.get(STEP);
            long step = given == null ? lastStep + 1 : given.longValue();
            row.put(STEP, step);
            lastStep = Math.max(lastStep, step);
            steps[i] = step;
            seqs[i] = locked.historyRows() + i;
            texts[i] = storedJson.write(row);
            last.setAll(row);
            logged.add(row);
        }
        last.put(STEP, lastStep);
        long newLastStep = lastStep;
        jdbc(connection -> {
            insertHistory(connection, locked.id(), seqs, steps, texts);
            try (PreparedStatement update = connection.prepareStatement("""
                    update runs set summary = summary || ?::jsonb, last_step = ?, row_count = row_count + ?,
                    updated_at = now() where id = ?""")) {
                update.setString(1, storedJson.write(last));
                update.setLong(2, newLastStep);
                update.setLong(3, rows.size());
                update.setLong(4, locked.id());
                return update.executeUpdate();
            }
        });
        ObjectNode payload = payload(locked);
        payload.set("metrics", logged);
        Caller caller = access.caller();
        events.record(EventType.RUN_METRIC, Scope.project(ref.projectId()), caller.userId(), caller.username(),
                payload);
        return new Logged(rows.size(), values, newLastStep);
    }

    private static int insertHistory(Connection connection, long runId, long[] seqs, long[] steps, String[] texts)
            throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement("""
                insert into run_history (run_id, seq, step, val)
                select ?, s, st, v::jsonb from unnest(?::bigint[], ?::bigint[], ?::text[]) as t(s, st, v)""")) {
            insert.setLong(1, runId);
            insert.setArray(2, connection.createArrayOf("bigint", box(seqs)));
            insert.setArray(3, connection.createArrayOf("bigint", box(steps)));
            insert.setArray(4, connection.createArrayOf("text", texts));
            return insert.executeUpdate();
        }
    }

    private static Long[] box(long[] values) {
        Long[] boxed = new Long[values.length];
        for (int i = 0; i < values.length; i++) {
            boxed[i] = values[i];
        }
        return boxed;
    }

    /** Checks every row before anything is stored; answers the number of metric values (without {@code _step}). */
    static long validate(List<ObjectNode> rows) {
        if (rows == null) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "body"));
        }
        if (rows.size() > MAX_BATCH_ROWS) {
            throw ApiException
                    .invalid(Violation.of("At most " + MAX_BATCH_ROWS + " rows per request", "too_long", "body"));
        }
        long values = 0;
        for (int i = 0; i < rows.size(); i++) {
            ObjectNode row = rows.get(i);
            if (row == null) {
                throw ApiException
                        .invalid(Violation.of("Row " + i + ": must be an object of numbers", "dict_type", "body", i));
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = row.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> field = it.next();
                String key = field.getKey();
                JsonNode value = field.getValue();
                if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
                    throw ApiException.invalid(
                            Violation.of("Row " + i + ": metric keys must be 1 to " + MAX_KEY_LENGTH + " characters",
                                    "string_too_long", "body", i, key));
                }
                if (STEP.equals(key)) {
                    if (!value.isIntegralNumber() || !value.canConvertToLong() || value.longValue() < 0) {
                        throw ApiException
                                .invalid(Violation.of("Row " + i + ", key '_step': must be a non-negative integer",
                                        "int_type", "body", i, key));
                    }
                    continue;
                }
                if (!value.isNumber()) {
                    throw ApiException.invalid(Violation.of(
                            "Row " + i + ", key '" + key + "': metric values must be numbers, not " + describe(value),
                            "float_type", "body", i, key));
                }
                if (value.isFloatingPointNumber() && !Double.isFinite(value.doubleValue())) {
                    throw ApiException.invalid(
                            Violation.of("Row " + i + ", key '" + key + "': metric values must be finite numbers",
                                    "finite_number", "body", i, key));
                }
                values++;
            }
        }
        return values;
    }

    /** JSON text cannot hold NaN or infinities; a number too large for a double would be stored as one. */
    static boolean isFinite(JsonNode value) {
        if (value.isFloatingPointNumber() && !Double.isFinite(value.doubleValue())) {
            return false;
        }
        for (JsonNode child : value) {
            if (!isFinite(child)) {
                return false;
            }
        }
        return true;
    }

    private static String describe(JsonNode value) {
        return switch (value.getNodeType()) {
            case STRING -> "a string";
            case BOOLEAN -> "a boolean";
            case NULL -> "null";
            case ARRAY -> "an array";
            case OBJECT -> "an object";
            default -> value.getNodeType().name().toLowerCase();
        };
    }

    @Transactional
    public ObjectNode summary(String entity, String project, String run) {
        requireName(run, "path", "run");
        ProjectRef ref = access.readableProject(entity, project);
        long runId = find(ref, run, false).id();
        return jdbc(connection -> {
            try (PreparedStatement query = connection.prepareStatement("select summary::text from runs where id = ?")) {
                query.setLong(1, runId);
                try (ResultSet rs = query.executeQuery()) {
                    rs.next();
                    return storedJson.readObject(rs.getString(1));
                }
            }
        });
    }

    /** History rows in logged order; with keys, the rows holding any of them, reduced to {@code _step} and them. */
    @Transactional
    public Page<ObjectNode> history(String entity, String project, String run, List<String> keys, Integer limit,
            Integer offset) {
        requireName(run, "path", "run");
        int size = QueryParams.limit(limit, 1000, 1, MAX_LIMIT);
        int skip = QueryParams.offset(offset);
        List<String> wanted = QueryParams.splitList(keys);
        ProjectRef ref = access.readableProject(entity, project);
        long runId = find(ref, run, false).id();
        List<ObjectNode> rows = new ArrayList<>();
        jdbc(connection -> {
            String filter = wanted.isEmpty() ? "" : " and jsonb_exists_any(val, ?::text[])";
            try (PreparedStatement query = connection.prepareStatement(
                    "select val::text from run_history where run_id = ?" + filter + " order by seq limit ? offset ?")) {
                int p = 1;
                query.setLong(p++, runId);
                if (!wanted.isEmpty()) {
                    query.setArray(p++, connection.createArrayOf("text", wanted.toArray()));
                }
                query.setInt(p++, size + 1);
                query.setInt(p, skip);
                try (ResultSet rs = query.executeQuery()) {
                    while (rs.next()) {
                        rows.add(storedJson.readObject(rs.getString(1)));
                    }
                }
            }
            return null;
        });
        Integer next = null;
        if (rows.size() > size) {
            rows.remove(size);
            next = skip + size;
        }
        if (!wanted.isEmpty()) {
            for (int i = 0; i < rows.size(); i++) {
                ObjectNode full = rows.get(i);
                ObjectNode reduced = JsonNodeFactory.instance.objectNode();
                reduced.set(STEP, full.get(STEP));
                for (String key : wanted) {
                    if (full.has(key)) {
                        reduced.set(key, full.get(key));
                    }
                }
                rows.set(i, reduced);
            }
        }
        return new Page<>(rows, next);
    }

    /** Runs of the project, newest first, filtered by name (RE2, partial match), creator and state. */
    @Transactional
    public Page<RunView> list(String entity, String project, String nameRegex, String creator, String state,
            Integer limit, Integer offset) {
        int size = QueryParams.limit(limit, 100, 1, MAX_LIMIT);
        int skip = QueryParams.offset(offset);
        com.google.re2j.Pattern regex = null;
        if (nameRegex != null && !nameRegex.isEmpty()) {
            try {
                regex = com.google.re2j.Pattern.compile(nameRegex);
            } catch (PatternSyntaxException e) {
                throw ApiException.invalid(Violation.of("Not a valid RE2 regular expression: " + e.getDescription(),
                        "regex", "query", "name"));
            }
        }
        if (state != null && !STATES.contains(state)) {
            throw ApiException.invalid(Violation.of("Must be one of running, finished, failed, crashed, killed", "enum",
                    "query", "state"));
        }
        ProjectRef ref = access.readableProject(entity, project);
        com.google.re2j.Pattern names = regex;
        List<RunView> page = new ArrayList<>(size + 1);
        jdbc(connection -> {
            try (PreparedStatement query = connection.prepareStatement("select " + RUN_COLUMNS + """
                     where r.project_id = ? and (?::text is null or u.username = ?)
                    and (?::text is null or r.state = ?) order by r.id desc""")) {
                query.setLong(1, ref.projectId());
                setNullableString(query, 2, creator);
                setNullableString(query, 3, creator);
                setNullableString(query, 4, state);
                setNullableString(query, 5, state);
                query.setFetchSize(500);
                try (ResultSet rs = query.executeQuery()) {
                    int matched = 0;
                    while (rs.next() && page.size() <= size) {
                        if (names != null && !names.matcher(rs.getString(2)).find()) {
                            continue;
                        }
                        if (matched++ >= skip) {
                            page.add(view(rs, ref));
                        }
                    }
                }
            }
            return null;
        });
        Integer next = null;
        if (page.size() > size) {
            page.remove(size);
            next = skip + size;
        }
        return new Page<>(page, next);
    }

    private static void setNullableString(PreparedStatement statement, int index, String value) throws SQLException {
        if (value == null) {
            statement.setNull(index, Types.VARCHAR);
        } else {
            statement.setString(index, value);
        }
    }

    private RunView find(ProjectRef ref, String run, boolean lock) {
        RunView found = jdbc(connection -> {
            try (PreparedStatement query = connection.prepareStatement("select " + RUN_COLUMNS
                    + " where r.project_id = ? and r.name = ?" + (lock ? " for update of r" : ""))) {
                query.setLong(1, ref.projectId());
                query.setString(2, run);
                try (ResultSet rs = query.executeQuery()) {
                    return rs.next() ? view(rs, ref) : null;
                }
            }
        });
        if (found == null) {
            throw ApiException.notFound("Run " + run + " not found in " + ref.entity() + "/" + ref.project());
        }
        return found;
    }

    private RunView view(ResultSet rs, ProjectRef ref) throws SQLException {
        return new RunView(rs.getLong(1), rs.getString(2), rs.getString(3), storedJson.readObject(rs.getString(4)),
                rs.getString(5), rs.getString(6), rs.getObject(7, OffsetDateTime.class),
                rs.getObject(8, OffsetDateTime.class), rs.getLong(9), rs.getLong(10), ref.entity(), ref.project());
    }

    private static ObjectNode payload(RunView run) {
        ObjectNode payload = JsonNodeFactory.instance.objectNode();
        payload.put("entity_name", run.entity());
        payload.put("project_name", run.project());
        payload.put("run_id", run.id());
        payload.put("run_name", run.name());
        payload.put("run_created_by", run.createdBy());
        return payload;
    }

    static void requireName(String name, Object... loc) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw ApiException.invalid(Violation.of(NAME_RULE, "string_pattern_mismatch", loc));
        }
    }

    private static void requireDisplayName(String displayName) {
        if (displayName != null && displayName.length() > MAX_DISPLAY_NAME) {
            throw ApiException.invalid(Violation.of("At most " + MAX_DISPLAY_NAME + " characters", "string_too_long",
                    "body", "display_name"));
        }
    }

    private static String randomName() {
        char[] id = new char[8];
        for (int i = 0; i < id.length; i++) {
            id[i] = ID_CHARS[RANDOM.nextInt(ID_CHARS.length)];
        }
        return new String(id);
    }

    private <T> T jdbc(org.hibernate.jdbc.ReturningWork<T> work) {
        return em.unwrap(Session.class).doReturningWork(work);
    }
}
