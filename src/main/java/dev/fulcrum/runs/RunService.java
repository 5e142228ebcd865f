package dev.fulcrum.runs;

import java.security.SecureRandom;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.persistence.TypedQuery;
import jakarta.transaction.Transactional;

import org.hibernate.jpa.HibernateHints;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.Names;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.events.EventType;
import dev.fulcrum.events.PlatformEvents;
import dev.fulcrum.events.PlatformEvents.Scope;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.platform.http.QueryParams;
import dev.fulcrum.platform.json.JsonInput;
import dev.fulcrum.platform.json.RegularExpressions;
import dev.fulcrum.platform.json.StoredJson;

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
    /** The most keys one history read filters by: each is looked up in every row read. */
    public static final int MAX_HISTORY_KEYS = 1000;
    static final String STEP = "_step";

    private static final char[] ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();
    /** A run with the username of its creator, in one statement (a subquery, so that a row lock takes only the run). */
    private static final String FIND = """
            select r, (select u.username from User u where u.id = r.createdBy) from Run r""";

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    @Inject
    PlatformEvents events;

    @Inject
    RunStatements statements;

    /** A run and its creator's username. */
    record Found(Run run, String creator) {
    }

    public record RunView(long id, String name, String displayName, ObjectNode config, String state, String createdBy,
            OffsetDateTime createdAt, OffsetDateTime updatedAt, long lastStep, long historyRows, String entity,
            String project, ObjectNode summary, List<String> tags, String notes) {
    }

    /** What the W&B SDK sets on a run; a null leaves the stored value. Config and summary replace the stored ones. */
    public record RunChanges(String displayName, ObjectNode config, String state, List<String> tags, String notes,
            ObjectNode summary) {
    }

    /** A run after an upsert, and whether the upsert created it. */
    public record Upserted(RunView run, boolean inserted) {
    }

    public record Logged(int rows, long values, long lastStep) {
    }

    /** A change of a run's state: the new and the previous state (null for its creation), when, by whom. */
    public record StateChange(String state, String previous, OffsetDateTime at, String by) {
    }

    public record Page<T>(List<T> items, Integer nextOffset) {
    }

    @Transactional
    public RunView create(String entity, String project, String name, String displayName, ObjectNode config) {
        if (config != null && !JsonInput.isFinite(config)) {
            throw ApiException.invalid(Violation.of("Numbers must be finite", "finite_number", "body", "config"));
        }
        ProjectRef ref = access.writableProject(entity, project);
        String runName = name != null ? name : randomName();
        String configText = storedJson.write(config == null ? JsonNodeFactory.instance.objectNode() : config);
        boolean inserted = statements.insert(ref.projectId(), runName, displayName, configText,
                access.caller().userId());
        if (!inserted) {
            throw ApiException.conflict("Run " + runName + " exists in " + entity + "/" + project);
        }
        return view(find(ref, runName, false), ref);
    }

    /**
     * Creates the run or changes it, as the W&B SDK's {@code UpsertBucket} does: needs the member role (the first write
     * creates the project); a change of state writes a {@code RUN_STATE} event.
     */
    @Transactional
    public Upserted upsert(String entity, String project, String name, RunChanges changes) {
        if (!Names.isName(name, Names.NAME_MAX)) {
            throw ApiException.invalid(Violation.of(
                    "Run names are 1 to 128 letters, digits, '_', '.' or '-', starting with a letter or digit",
                    "string_pattern_mismatch", "body", "name"));
        }
        if (changes.state() != null && !STATES.contains(changes.state())) {
            throw ApiException.invalid(
                    Violation.of("Must be one of running, finished, failed, crashed, killed", "enum", "body", "state"));
        }
        if (changes.displayName() != null && changes.displayName().length() > 256) {
            throw ApiException
                    .invalid(Violation.of("At most 256 characters", "string_too_long", "body", "displayName"));
        }
        if (changes.config() != null && !JsonInput.isFinite(changes.config())
                || changes.summary() != null && !JsonInput.isFinite(changes.summary())) {
            throw ApiException.invalid(Violation.of("Numbers must be finite", "finite_number", "body"));
        }
        ProjectRef ref = access.writableProject(entity, project);
        String config = storedJson
                .write(changes.config() == null ? JsonNodeFactory.instance.objectNode() : changes.config());
        boolean inserted = statements.insert(ref.projectId(), name, changes.displayName(), config,
                access.caller().userId());
        Found found = find(ref, name, true);
        Run run = found.run();
        RunView before = view(found, ref);
        if (changes.displayName() != null) {
            run.displayName = changes.displayName();
        }
        if (changes.config() != null) {
            run.config = config;
        }
        if (changes.tags() != null) {
            run.tags = changes.tags().toArray(String[]::new);
        }
        if (changes.notes() != null) {
            run.notes = changes.notes();
        }
        if (changes.state() != null) {
            run.state = changes.state();
        }
        run.updatedAt = OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.MICROS);
        em.flush();
        if (changes.summary() != null) {
            statements.replaceSummary(run.id, storedJson.write(changes.summary()));
        }
        if (!inserted && changes.state() != null && !changes.state().equals(before.state())) {
            stateChanged(ref, before, changes.state(), run.displayName);
        }
        em.refresh(run);
        return new Upserted(view(found, ref), inserted);
    }

    private void stateChanged(ProjectRef ref, RunView before, String state, String displayName) {
        ObjectNode payload = payload(before, displayName);
        payload.put("state", state);
        payload.put("previous_state", before.state());
        Caller caller = access.caller();
        events.record(EventType.RUN_STATE, Scope.project(ref.projectId()), caller.userId(), caller.username(), payload);
    }

    /** Deletes the run and its history; false if there was no such run. */
    @Transactional
    public boolean delete(String entity, String project, String run) {
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        return Run.delete("projectId = ?1 and name = ?2", ref.projectId(), run) == 1;
    }

    @Transactional
    public RunView get(String entity, String project, String run) {
        ProjectRef ref = access.readableProject(entity, project);
        return view(find(ref, run, false), ref);
    }

    /** Changes state and display name; a change of state writes a {@code RUN_STATE} event. */
    @Transactional
    public RunView update(String entity, String project, String run, String state, String displayName) {
        if (state != null && !STATES.contains(state)) {
            throw ApiException.invalid(
                    Violation.of("Must be one of running, finished, failed, crashed, killed", "enum", "body", "state"));
        }
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        Found found = find(ref, run, true);
        RunView before = view(found, ref);
        String newState = state == null ? before.state() : state;
        found.run().state = newState;
        found.run().displayName = displayName == null ? before.displayName() : displayName;
        found.run().updatedAt = OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.MICROS);
        if (!newState.equals(before.state())) {
            ObjectNode payload = payload(before, found.run().displayName);
            payload.put("state", newState);
            payload.put("previous_state", before.state());
            Caller caller = access.caller();
            events.record(EventType.RUN_STATE, Scope.project(ref.projectId()), caller.userId(), caller.username(),
                    payload);
        }
        return view(find(ref, run, false), ref);
    }

    /** Stores a batch of metric rows; every value must be a number, {@code _step} a non-negative integer. */
    @Transactional
    public Logged log(String entity, String project, String run, List<ObjectNode> rows) {
        long values = validate(rows);
        ProjectRef ref = access.project(entity, project, Role.MEMBER);
        RunStatements.Locked locked = statements.lockForLog(ref.projectId(), run).orElseThrow(() -> notFound(ref, run));
        long lastStep = locked.lastStep();
        Long[] steps = new Long[rows.size()];
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
            texts[i] = storedJson.write(row);
            last.setAll(row);
            logged.add(row);
        }
        last.put(STEP, lastStep);
        statements.append(locked.id(), locked.historyRows(), steps, texts, storedJson.write(last), lastStep);
        ObjectNode payload = payload(ref.entity(), ref.project(), locked.id(), locked.name(), locked.creator(),
                locked.displayName());
        payload.set("metrics", logged);
        Caller caller = access.caller();
        events.record(EventType.RUN_METRIC, Scope.project(ref.projectId()), caller.userId(), caller.username(),
                payload);
        return new Logged(rows.size(), values, lastStep);
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
        ProjectRef ref = access.readableProject(entity, project);
        return storedJson.readObject(find(ref, run, false).run().summary);
    }

    /** The run's creation (state running) and then its state changes, oldest first. */
    @Transactional
    public List<StateChange> stateChanges(String entity, String project, String run) {
        ProjectRef ref = access.readableProject(entity, project);
        Found found = find(ref, run, false);
        List<StateChange> changes = new ArrayList<>();
        changes.add(new StateChange("running", null, found.run().createdAt, found.creator()));
        for (PlatformEvents.Found change : events.withPayload(ref.projectId(), EventType.RUN_STATE, "run_id",
                Long.toString(found.run().id))) {
            changes.add(new StateChange(change.payload().path("state").asText(null),
                    change.payload().path("previous_state").asText(null), change.occurredAt(), change.author()));
        }
        return changes;
    }

    /** History rows in logged order; with keys, the rows holding any of them, reduced to {@code _step} and them. */
    @Transactional
    public Page<ObjectNode> history(String entity, String project, String run, List<String> keys, Integer limit,
            Integer offset) {
        int size = QueryParams.limit(limit, 1000, 1, MAX_LIMIT);
        int skip = QueryParams.offset(offset);
        List<String> wanted = QueryParams.splitList(keys);
        if (wanted.size() > MAX_HISTORY_KEYS) {
            throw ApiException.invalid(
                    Violation.of("Must be at most " + MAX_HISTORY_KEYS + " keys", "too_long", "query", "keys"));
        }
        ProjectRef ref = access.readableProject(entity, project);
        long runId = find(ref, run, false).run().id;
        String query = "select h.val from RunHistory h where h.runId = ?1"
                + (wanted.isEmpty() ? "" : " and function('jsonb_exists_any', h.val, ?2) = true") + " order by h.seq";
        TypedQuery<String> rowQuery = em.createQuery(query, String.class).setParameter(1, runId);
        if (!wanted.isEmpty()) {
            rowQuery.setParameter(2, wanted.toArray(String[]::new));
        }
        List<ObjectNode> rows = new ArrayList<>(rowQuery.setFirstResult(skip).setMaxResults(size + 1).getResultList()
                .stream().map(storedJson::readObject).toList());
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
        // a viewer's filter: the platform's one rule for a user's regex, checked before anything is compiled
        com.google.re2j.Pattern regex = nameRegex == null || nameRegex.isEmpty() ? null
                : RegularExpressions.compile(nameRegex, "query", "name");
        if (state != null && !STATES.contains(state)) {
            throw ApiException.invalid(Violation.of("Must be one of running, finished, failed, crashed, killed", "enum",
                    "query", "state"));
        }
        ProjectRef ref = access.readableProject(entity, project);
        com.google.re2j.Pattern names = regex;
        List<RunView> page = new ArrayList<>(size + 1);
        StringBuilder query = new StringBuilder(FIND).append(" where r.projectId = :project");
        if (creator != null) {
            query.append(" and exists (select 1 from User u where u.id = r.createdBy and u.username = :creator)");
        }
        if (state != null) {
            query.append(" and r.state = :state");
        }
        TypedQuery<Found> runs = em.createQuery(query.append(" order by r.id desc").toString(), Found.class)
                .setParameter("project", ref.projectId()).setHint(HibernateHints.HINT_FETCH_SIZE, 500)
                .setHint(HibernateHints.HINT_READ_ONLY, true);
        if (creator != null) {
            runs.setParameter("creator", creator);
        }
        if (state != null) {
            runs.setParameter("state", state);
        }
        try (Stream<Found> found = runs.getResultStream()) {
            Iterator<Found> it = found.iterator();
            int matched = 0;
            while (it.hasNext() && page.size() <= size) {
                Found next = it.next();
                if (names != null && !names.matcher(next.run().name).find()) {
                    continue;
                }
                if (matched++ >= skip) {
                    page.add(view(next, ref));
                }
            }
        }
        Integer next = null;
        if (page.size() > size) {
            page.remove(size);
            next = skip + size;
        }
        return new Page<>(page, next);
    }

    private Found find(ProjectRef ref, String run, boolean lock) {
        TypedQuery<Found> query = em.createQuery(FIND + " where r.projectId = ?1 and r.name = ?2", Found.class)
                .setParameter(1, ref.projectId()).setParameter(2, run);
        if (lock) {
            query.setLockMode(LockModeType.PESSIMISTIC_WRITE);
        }
        return query.getResultStream().findFirst().orElseThrow(() -> notFound(ref, run));
    }

    private static ApiException notFound(ProjectRef ref, String run) {
        return ApiException.notFound("Run " + run + " not found in " + ref.entity() + "/" + ref.project());
    }

    private RunView view(Found found, ProjectRef ref) {
        Run run = found.run();
        return new RunView(run.id, run.name, run.displayName, storedJson.readObject(run.config), run.state,
                found.creator(), run.createdAt, run.updatedAt, run.lastStep, run.rowCount, ref.entity(), ref.project(),
                storedJson.readObject(run.summary), run.tags == null ? List.of() : List.of(run.tags), run.notes);
    }

    /** A run event's payload; {@code displayName}: the run's display name when the event happens. */
    private static ObjectNode payload(RunView run, String displayName) {
        return payload(run.entity(), run.project(), run.id(), run.name(), run.createdBy(), displayName);
    }

    /**
     * The run's fields every run event carries; {@code run_display_name} is its display name, or its name when it has
     * none (as the SDK and the console show it).
     */
    private static ObjectNode payload(String entity, String project, long runId, String runName, String createdBy,
            String displayName) {
        ObjectNode payload = JsonNodeFactory.instance.objectNode();
        payload.put("entity_name", entity);
        payload.put("project_name", project);
        payload.put("run_id", runId);
        payload.put("run_name", runName);
        payload.put("run_display_name", displayName == null || displayName.isEmpty() ? runName : displayName);
        payload.put("run_created_by", createdBy);
        return payload;
    }

    private static String randomName() {
        char[] id = new char[8];
        for (int i = 0; i < id.length; i++) {
            id[i] = ID_CHARS[RANDOM.nextInt(ID_CHARS.length)];
        }
        return new String(id);
    }

}
