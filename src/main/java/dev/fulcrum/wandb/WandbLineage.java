package dev.fulcrum.wandb;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.platform.database.NativeSql;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.runs.RunIds;
import dev.fulcrum.runs.RunService;
import dev.fulcrum.runs.RunService.RunView;
import dev.fulcrum.wandb.WandbArtifactNodes.ArtifactNode;
import dev.fulcrum.wandb.WandbNodes.RunNode;

import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * Which run logged which artifact version and which runs used it, as the W&B SDK reports it. Owner of the table
 * {@code wandb_artifact_lineage} (and of {@code wandb_artifact_drafts.run_name}); other packages ask this service. The
 * run named by {@code createArtifact} logged the version its draft commits to (the first run to commit a content keeps
 * it); {@code useArtifact}'s run used the version. A deleted run or version takes its rows with it (the migration's
 * cascades). Reading follows the runs' and artifacts' rules: a run or version the caller may not read is left out of
 * every answer, so lineage never reveals it.
 */
@ApplicationScoped
class WandbLineage {

    static final int DEFAULT_PAGE = 50;
    static final String LOGGED = "logged";
    static final String USED = "used";

    /**
     * A page of the run's lineage rows of a kind whose version the caller (parameter 3) may read, and how many there
     * are: one row with a null version when the page is empty.
     */
    private static final String READABLE_PAGE = """
            with readable as (
                select l.version_id, l.at from wandb_artifact_lineage l
                join artifact_version_projects v on v.version_id = l.version_id
                join project_names p on p.project_id = v.project_id
                join effective_roles r on r.entity_id = p.entity_id and r.user_id = ?3
                where l.run_id = ?1 and l.kind = ?2)
            select page.version_id, total.n from (select count(*) as n from readable) total
            left join lateral (select version_id, at from readable order by at, version_id limit ?4 offset ?5) page
            on true order by page.at, page.version_id""";

    /** A version of the page (null: the page is empty) and how many versions are readable in all. */
    private record Counted(Long versionId, long total) {
    }

    @Inject
    EntityManager em;

    @Inject
    Access access;

    @Inject
    RunService runs;

    @Inject
    RunIds runIds;

    @Inject
    ArtifactVersions versions;

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring
                .type("Run",
                        type -> type.dataFetcher("outputArtifacts", env -> artifacts(env, LOGGED))
                                .dataFetcher("inputArtifacts", env -> artifacts(env, USED)))
                .type("Artifact", type -> type.dataFetcher("createdBy", env -> {
                    ArtifactNode node = env.getSource();
                    return node.version() == null ? null
                            : runsOf(node.version().id(), LOGGED).stream().findFirst().orElse(null);
                }).dataFetcher("usedBy", env -> {
                    ArtifactNode node = env.getSource();
                    List<RunNode> used = node.version() == null ? List.of() : runsOf(node.version().id(), USED);
                    return Map.of("edges", used.stream().map(run -> Map.of("node", run, "cursor", run.id)).toList(),
                            "pageInfo", Map.of("hasNextPage", false));
                })).type("Initiator", type -> type.typeResolver(env -> env.getSchema().getObjectType("Run")));
    }

    /** Remembers the run a draft is logged by ({@code createArtifact}'s {@code runName}; null: none). */
    @Transactional
    void loggingRun(long draftId, String runName) {
        if (runName != null && !runName.isEmpty()) {
            NativeSql.update(em, "update wandb_artifact_drafts set run_name = ?1 where id = ?2", runName, draftId);
        }
    }

    /** The draft's run logged the version it was committed to (when the run exists; a run logging it again: kept). */
    @Transactional
    void logged(long draftId, VersionView version) {
        Optional<String> runName = NativeSql.first(em, "select run_name from wandb_artifact_drafts where id = ?1",
                row -> row.string(0), draftId);
        if (runName.isEmpty()) {
            return;
        }
        RunView run;
        try {
            run = runs.get(version.entity(), version.project(), runName.get());
        } catch (ApiException e) {
            if (e.kind() == ApiException.Kind.NOT_FOUND) {
                return; // a run the SDK never created (offline logging): nothing to keep
            }
            throw e;
        }
        keep(version.id(), run.id(), LOGGED);
    }

    /** The run (member role on its project; it must exist) used the version. */
    @Transactional
    void used(VersionView version, String entity, String project, String runName) {
        if (runName == null || runName.isEmpty()) {
            throw ApiException.invalid(Violation.of("A run name is required", "missing", "body", "input", "runName"));
        }
        access.project(entity, project, Role.MEMBER);
        keep(version.id(), runs.get(entity, project, runName).id(), USED);
    }

    private void keep(long versionId, long runId, String kind) {
        NativeSql.update(em, "insert into wandb_artifact_lineage (version_id, run_id, kind) values (?1, ?2, ?3)"
                + " on conflict do nothing", versionId, runId, kind);
    }

    /** The runs that logged ({@code logged}) or used the version, those the caller may read, oldest first. */
    @Transactional
    List<RunNode> runsOf(long versionId, String kind) {
        List<Long> ids = NativeSql.list(em,
                "select run_id from wandb_artifact_lineage where version_id = ?1 and kind = ?2 order by at, run_id",
                row -> row.longValue(0), versionId, kind);
        List<RunNode> found = new ArrayList<>();
        for (long id : ids) {
            runIds.readable(id).ifPresent(run -> found.add(new RunNode(run)));
        }
        return found;
    }

    /**
     * The run's logged or used versions the caller may read, oldest first, a page after the cursor: the rights (a role
     * on the version's entity, as {@link Access#readableProject} asks) and the page in one statement, which also counts
     * the readable rows; the page's rows then read as versions.
     */
    @Transactional
    Map<String, Object> artifacts(DataFetchingEnvironment env, String kind) {
        RunNode run = env.getSource();
        int first = WandbPages.size(env.getArgument("first"), DEFAULT_PAGE);
        int offset = WandbPages.offset(env.getArgument("after"));
        List<Counted> rows = NativeSql.list(em, READABLE_PAGE, row -> new Counted(row.longValue(0), row.longValue(1)),
                run.run.id(), kind, access.caller().userId(), first, offset);
        long total = rows.get(0).total();
        List<Long> page = rows.stream().map(Counted::versionId).filter(Objects::nonNull).toList();
        List<Map<String, Object>> edges = new ArrayList<>();
        for (int i = 0; i < page.size(); i++) {
            edges.add(Map.of("node", ArtifactNode.of(versions.byId(page.get(i), false)), "cursor",
                    WandbPages.cursor(offset + i)));
        }
        return WandbPages.connection(edges, offset + page.size() < total, total);
    }
}
