package dev.fulcrum.wandb;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.EntityRef;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.accounts.Project;
import dev.fulcrum.accounts.Projects;
import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.accounts.Teams;
import dev.fulcrum.accounts.User;
import dev.fulcrum.wandb.WandbNodes.ProjectNode;
import dev.fulcrum.wandb.WandbNodes.UserNode;

import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * Projects as the SDK's {@code Api().projects(entity)} and {@code Api().project(name, entity)} read them
 * ({@code GetProjects}, {@code GetProject}): the accounts service's projects with when and by whom they were made, and
 * the user fields those documents ask.
 */
@ApplicationScoped
class WandbProjects {

    @Inject
    Access access;

    @Inject
    Projects projects;

    @Inject
    ApiKeys apiKeys;

    @Inject
    Teams teams;

    @Inject
    WandbAccounts accounts;

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring.type("Query", type -> type.dataFetcher("models", this::models))
                .type("Project", type -> type.dataFetcher("createdAt", env -> {
                    ProjectNode project = env.getSource();
                    if (project.registry() != null) {
                        Registry registry = Registry.findById(project.registry().registryId());
                        return registry == null ? null : registry.createdAt.toString();
                    }
                    Project stored = stored(project);
                    return stored == null || stored.createdAt == null ? null : stored.createdAt.toString();
                }).dataFetcher("isBenchmark", env -> false).dataFetcher("user", env -> {
                    Project stored = stored(env.getSource());
                    User creator = stored == null || stored.createdBy == null ? null : User.findById(stored.createdBy);
                    return creator == null ? null : accounts.user(creator.username);
                })).type("User", type -> type.dataFetcher("deletedAt", env -> null)
                        .dataFetcher("projects", this::managed).dataFetcher("apiKeys", env -> {
                            UserNode user = env.getSource();
                            long caller = access.caller().userId();
                            if (!WandbNodes.opaque("User", Long.toString(caller)).equals(user.id())) {
                                return null; // another user's keys are theirs
                            }
                            return Map.of("edges",
                                    apiKeys.list(caller).stream().filter(key -> key.revokedAt == null)
                                            .map(key -> Map.of("node",
                                                    Map.of("id", WandbNodes.opaque("ApiKey", Long.toString(key.id)),
                                                            "name", key.name == null ? "" : key.name)))
                                            .toList());
                        }));
    }

    /** The project behind a node; null for a registry. */
    private static Project stored(ProjectNode project) {
        return project.ref() == null || project.ref().projectId() == null ? null
                : Project.findById(project.ref().projectId());
    }

    /**
     * The viewer's {@code projects}: those whose automations it manages, of its personal entity and of the teams it
     * administers (what the SDK walks for {@code Api().automations()} without an entity); null for another user.
     */
    private Map<String, Object> managed(DataFetchingEnvironment env) {
        UserNode user = env.getSource();
        if (!WandbNodes.opaque("User", Long.toString(access.caller().userId())).equals(user.id())) {
            return null;
        }
        int size = WandbPages.size(env.getArgument("first"), 50);
        int offset = WandbPages.offset(env.getArgument("after"));
        List<String> entities = new ArrayList<>();
        entities.add(accounts.defaultEntity());
        teams.list().stream().filter(team -> team.role() != null && team.role().atLeast(Role.ADMIN))
                .forEach(team -> entities.add(team.value().name));
        List<ProjectNode> all = new ArrayList<>();
        for (String entity : entities) {
            EntityRef ref = access.entity(entity, Role.ADMIN);
            projects.list(entity).forEach(project -> all
                    .add(ProjectNode.of(new ProjectRef(ref.entityId(), entity, project.id, project.name, ref.role()))));
        }
        List<Map<String, Object>> edges = new ArrayList<>();
        for (int i = offset; i < Math.min(all.size(), offset + size); i++) {
            edges.add(Map.of("node", all.get(i), "cursor", WandbPages.cursor(i)));
        }
        return WandbPages.connection(edges, offset + size < all.size(), null);
    }

    private Map<String, Object> models(DataFetchingEnvironment env) {
        String given = env.getArgument("entityName");
        String entity = given == null || given.isEmpty() ? accounts.defaultEntity() : given;
        int size = WandbPages.size(env.getArgument("first"), 50);
        int offset = WandbPages.offset(env.getArgument("after"));
        List<Project> all = projects.list(entity);
        EntityRef ref = access.entity(entity, Role.VIEWER);
        List<Map<String, Object>> edges = new ArrayList<>();
        for (int i = offset; i < Math.min(all.size(), offset + size); i++) {
            Project project = all.get(i);
            edges.add(Map.of("node",
                    ProjectNode.of(new ProjectRef(ref.entityId(), entity, project.id, project.name, ref.role())),
                    "cursor", WandbPages.cursor(i)));
        }
        return WandbPages.connection(edges, offset + size < all.size(), null);
    }
}
