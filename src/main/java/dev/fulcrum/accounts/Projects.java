package dev.fulcrum.accounts;

import java.util.List;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import dev.fulcrum.accounts.Access.EntityRef;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Projects of users and teams. Viewers read, members create, admins delete; deleting a project deletes everything in it
 * (the database cascades from {@code projects}).
 */
@ApplicationScoped
public class Projects {

    @Inject
    Access access;

    @Inject
    EntityManager em;

    @Transactional
    public List<Project> list(String entity) {
        EntityRef ref = access.entity(entity, Role.VIEWER);
        return Project.list("entityId = ?1 order by name", ref.entityId());
    }

    /** A new project; 409 if the entity has one of that name already. */
    @Transactional
    public Project create(String entity, String name, String description) {
        EntityRef ref = access.entity(entity, Role.MEMBER);
        long id = ProjectStatements.insert(em, ref.entityId(), name, description, access.caller().userId())
                .orElseThrow(() -> ApiException.conflict("Project " + entity + "/" + name + " already exists"));
        return Project.findById(id);
    }

    @Transactional
    public Project get(String entity, String project) {
        return Project.findById(access.readableProject(entity, project).projectId());
    }

    @Transactional
    public void delete(String entity, String project) {
        Project.deleteById(access.project(entity, project, Role.ADMIN).projectId());
    }
}
