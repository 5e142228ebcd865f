package dev.fulcrum.runs;

import java.util.ArrayList;
import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.json.StoredJson;
import dev.fulcrum.runs.RunFilter.Order;
import dev.fulcrum.runs.RunService.Page;
import dev.fulcrum.runs.RunService.RunView;

/**
 * A project's runs chosen by a {@link RunFilter} and ordered by a field, a page at a time, and how many there are. The
 * filter becomes one SQL condition whose values are all parameters ({@link RunSearchStatements}); a {@code $regex}
 * condition is matched by RE2 in Java over the project's values of its field (PostgreSQL's regexes backtrack), and
 * stands in the SQL as the set of ids that matched.
 */
@ApplicationScoped
public class RunSearch {

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Inject
    StoredJson storedJson;

    /** How many runs of the project the filter keeps (the caller reads the project). */
    @Transactional
    public long count(String entity, String project, RunFilter filter) {
        ProjectRef ref = access.readableProject(entity, project);
        return RunSearchStatements.count(em, ref.projectId(), filter);
    }

    /** A page of the runs the filter keeps, in the order asked; the next page's offset when there are more. */
    @Transactional
    public Page<RunView> search(String entity, String project, RunFilter filter, Order order, int limit, int offset) {
        ProjectRef ref = access.readableProject(entity, project);
        List<RunView> runs = RunSearchStatements.page(em, ref, storedJson, filter, order, limit, offset);
        Integer next = null;
        if (runs.size() > limit) {
            runs = runs.subList(0, limit);
            next = offset + limit;
        }
        return new Page<>(runs, next);
    }

    /**
     * The history rows of a run whose step is in {@code [minStep, maxStep)}, in logged order, at most {@code limit};
     * with keys, the rows holding every one of them, reduced to {@code _step} and them (the caller reads the project).
     */
    @Transactional
    public List<ObjectNode> historyBetween(String entity, String project, String run, long minStep, long maxStep,
            List<String> keys, int limit) {
        ProjectRef ref = access.readableProject(entity, project);
        long runId = RunSearchStatements.runId(em, ref.projectId(), run).orElseThrow(
                () -> ApiException.notFound("Run " + run + " not found in " + ref.entity() + "/" + ref.project()));
        List<String> wanted = keys == null ? List.of()
                : keys.stream().filter(key -> !key.equals(RunService.STEP)).distinct().toList();
        List<ObjectNode> rows = RunHistoryStatements.between(em, runId, minStep, maxStep, wanted, limit,
                storedJson::readObject);
        if (keys == null) {
            return rows;
        }
        List<ObjectNode> reduced = new ArrayList<>(rows.size());
        for (ObjectNode full : rows) {
            ObjectNode kept = JsonNodeFactory.instance.objectNode();
            kept.set(RunService.STEP, full.get(RunService.STEP));
            for (String key : wanted) {
                kept.set(key, full.get(key));
            }
            reduced.add(kept);
        }
        return reduced;
    }
}
