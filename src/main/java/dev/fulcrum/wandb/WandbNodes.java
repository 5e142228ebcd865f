package dev.fulcrum.wandb;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.function.Supplier;

import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.accounts.Access.RegistryRef;
import dev.fulcrum.runs.RunService.RunView;
import dev.fulcrum.runs.RunStreams.Tails;

/**
 * The objects of the W&B GraphQL schema that Fulcrum's stores answer, as the fetchers of {@link WandbGraphql} pass
 * them.
 */
final class WandbNodes {

    private WandbNodes() {
    }

    record UserNode(String id, String username, String name, String email, String entity, String flags, Boolean admin,
            EntityNode defaultEntity) {
    }

    record EntityNode(String id, String name, boolean isTeam) {
    }

    /**
     * A project, or a registry shown as the W&B project {@code wandb-registry-<name>} of the organization's entity
     * ({@code registry} set, {@code ref} null; see {@link WandbRegistries}).
     */
    record ProjectNode(String id, String name, String entityName, ProjectRef ref, RegistryRef registry) {

        static ProjectNode of(ProjectRef ref) {
            return new ProjectNode(opaque("Project", Long.toString(ref.projectId())), ref.project(), ref.entity(), ref,
                    null);
        }

        static ProjectNode of(RegistryRef registry) {
            return new ProjectNode(opaque("Project", "registry:" + registry.registryId()),
                    WandbRegistries.PROJECT_PREFIX + registry.registry(), WandbRegistries.ORG_ENTITY, null, registry);
        }
    }

    /** A run, with what it keeps besides its history read once when a document asks for it. */
    static final class RunNode {

        final String id;
        final RunView run;
        private Tails tails;

        RunNode(RunView run) {
            this.id = runId(run.name(), run.project(), run.entity());
            this.run = run;
        }

        Tails tails(Supplier<Tails> read) {
            if (tails == null) {
                tails = read.get();
            }
            return tails;
        }
    }

    record ServerFeature(String name, boolean isEnabled) {
    }

    record ServerInfoNode(List<ServerFeature> features) {
    }

    /** W&B's form of a run's storage id: base64 of {@code Run:v1:{run}:{project}:{entity}}. */
    static String runId(String run, String project, String entity) {
        return opaque("Run:v1", run + ":" + project + ":" + entity);
    }

    /** The run, project and entity of a storage id, or null when it is not one. */
    static String[] parseRunId(String id) {
        try {
            String text = new String(Base64.getDecoder().decode(id), StandardCharsets.UTF_8);
            String[] parts = text.split(":", -1);
            return parts.length == 5 && parts[0].equals("Run") && parts[1].equals("v1")
                    ? new String[] { parts[2], parts[3], parts[4] }
                    : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    static String opaque(String type, String key) {
        return Base64.getEncoder().encodeToString((type + ":" + key).getBytes(StandardCharsets.UTF_8));
    }
}
