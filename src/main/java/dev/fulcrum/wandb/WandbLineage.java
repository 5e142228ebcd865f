package dev.fulcrum.wandb;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.artifacts.ArtifactDrafts.Draft;
import dev.fulcrum.artifacts.ArtifactVersions;
import dev.fulcrum.artifacts.ArtifactViews.VersionView;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;
import dev.fulcrum.runs.RunIds;
import dev.fulcrum.runs.RunService;
import dev.fulcrum.runs.RunService.RunView;
import dev.fulcrum.wandb.WandbArtifactNodes.ArtifactNode;
import dev.fulcrum.wandb.WandbLineageStatements.Counted;
import dev.fulcrum.wandb.WandbNodes.RunNode;

import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * Which run logged which artifact version and which runs used it, as the W&B SDK reports it (no other door reports it,
 * so it stays the W&B door's). Owner of the table {@code wandb_artifact_lineage} (its statements in
 * {@link WandbLineageStatements}); other packages ask this service. The run named by {@code createArtifact} (kept on
 * the artifacts store's draft as its logging run) logged the version its draft commits to (the first run to commit a
 * content keeps it); {@code useArtifact}'s run used the version. A deleted run or version takes its rows with it (the
 * migration's cascades). Reading follows the runs' and artifacts' rules: a run or version the caller may not read is
 * left out of every answer, so lineage never reveals it.
 */
@ApplicationScoped
class WandbLineage {

    static final int DEFAULT_PAGE = 50;
    static final String LOGGED = "logged";
    static final String USED = "used";

    @Inject
    WandbLineageStatements statements;

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

    /** The draft's run logged the version it was committed to (when the run exists; a run logging it again: kept). */
    @Transactional
    void logged(Draft draft, VersionView version) {
        if (draft.runName() == null) {
            return;
        }
        RunView run;
        try {
            run = runs.get(version.entity(), version.project(), draft.runName());
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
        statements.keep(versionId, runId, kind);
    }

    /** The runs that logged ({@code logged}) or used the version, those the caller may read, oldest first. */
    @Transactional
    List<RunNode> runsOf(long versionId, String kind) {
        List<Long> ids = statements.runsOf(versionId, kind);
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
        List<Counted> rows = statements.readablePage(run.run.id(), kind, access.caller().userId(), first, offset);
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
