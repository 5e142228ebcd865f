package dev.fulcrum.wandb;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.wandb.WandbNodes.EntityNode;
import dev.fulcrum.wandb.WandbNodes.ProjectNode;

/**
 * Fulcrum's registries as the W&B SDK addresses them. A W&B registry belongs to an organization and is the project
 * {@code wandb-registry-<name>} of the organization's entity; Fulcrum's registries belong to the server, not to a team.
 * So the whole server is one organization, {@value #ORGANIZATION}: every entity, team or personal, answers it as its
 * organization (a personal entity that answered several, one per team, would make the SDK refuse to link from it
 * without an organization named in the path). Its entity, {@value #ORG_ENTITY}, is a name no user or team can have
 * (entity names begin with a letter or a digit), so a registry path never shadows a project of an entity. The registry
 * {@code r} is the project {@code wandb-registry-r} of that entity, and its collections are the registry's collections,
 * each made by the first link into it, as through the REST API.
 */
@ApplicationScoped
class WandbRegistries {

    static final String ORGANIZATION = "fulcrum";
    static final String ORG_ENTITY = "_registries";
    static final String PROJECT_PREFIX = "wandb-registry-";

    @Inject
    Access access;

    record OrganizationNode(String id, String name, EntityNode orgEntity, String coreWeaveOrganizationId) {
    }

    static OrganizationNode organization() {
        return new OrganizationNode(WandbNodes.opaque("Organization", ORGANIZATION), ORGANIZATION, orgEntity(), null);
    }

    static EntityNode orgEntity() {
        return new EntityNode(WandbNodes.opaque("Entity", ORG_ENTITY), ORG_ENTITY, true);
    }

    /** The registry a W&B project of an entity names, or null when it is an ordinary project. */
    static String registryOf(String entity, String project) {
        return ORG_ENTITY.equals(entity) && project != null && project.startsWith(PROJECT_PREFIX)
                && project.length() > PROJECT_PREFIX.length() ? project.substring(PROJECT_PREFIX.length()) : null;
    }

    /**
     * The project of the organization's entity named {@code project}: its registry when the caller has a role on it;
     * null when there is no such registry (or the name is not a registry's).
     */
    @Transactional
    ProjectNode project(String project) {
        String registry = registryOf(ORG_ENTITY, project);
        if (registry == null) {
            return null;
        }
        try {
            return ProjectNode.of(access.registry(registry, Role.VIEWER));
        } catch (ApiException e) {
            if (e.kind() == ApiException.Kind.NOT_FOUND) {
                return null;
            }
            throw e;
        }
    }
}
