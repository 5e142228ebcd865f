package dev.fulcrum.accounts;

import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.github.benmanes.caffeine.cache.Cache;

import io.micrometer.core.instrument.MeterRegistry;

import dev.fulcrum.platform.Caches;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Who may do what in an entity's projects: team roles imply the same role in every project of the team; the owner of a
 * personal entity is its admin; registries have their own members and roles; server administrators may do everything.
 * Unknown entity or registry: 404; no or too small a role: 403.
 */
@ApplicationScoped
public class Access {

    @Inject
    CurrentCaller current;

    @Inject
    EntityManager em;

    @Inject
    AccessChanges changes;

    private static final int MAX_REMEMBERED = 100_000;

    /** A user's role on an entity as a lookup found it, and the access generation it was read in. */
    private record Remembered(long entityId, Role role, long stamp) {
    }

    /** Entity roles looked up for callers known off a request (by user and entity), see {@link #rememberedEntity}. */
    private Cache<String, Remembered> entityRoles;

    @Inject
    void caches(MeterRegistry registry) {
        entityRoles = Caches.bounded(registry, "entity_roles", MAX_REMEMBERED);
    }

    public Caller caller() {
        return current.get();
    }

    /** A project the caller may read; unknown project: 404. */
    public ProjectRef readableProject(String entity, String project) {
        return project(entity, project, Role.VIEWER);
    }

    /** An existing project on which the caller has at least {@code required}; unknown project: 404. */
    @Transactional
    public ProjectRef project(String entity, String project, Role required) {
        ProjectRef ref = resolve(entity, project, required);
        if (ref.projectId() == null) {
            throw ApiException.notFound("Project " + entity + "/" + project + " not found");
        }
        return ref;
    }

    /**
     * A project on which the caller has at least {@code required}, or empty when the entity has no such project (the
     * W&B protocol answers null there); unknown entity: 404.
     */
    @Transactional
    public Optional<ProjectRef> existingProject(String entity, String project, Role required) {
        ProjectRef ref = resolve(entity, project, required);
        return ref.projectId() == null ? Optional.empty() : Optional.of(ref);
    }

    /** A project the caller may write to, created on this first write if it does not exist yet. */
    @Transactional
    public ProjectRef writableProject(String entity, String project) {
        ProjectRef ref = resolve(entity, project, Role.MEMBER);
        if (ref.projectId() != null) {
            return ref;
        }
        // Or a concurrent first write created it: the insert waited for that to commit, so it can be read now.
        long id = ProjectStatements.insert(em, ref.entityId(), project, null, caller().userId())
                .orElseGet(() -> em.createQuery("select id from Project where entityId = ?1 and name = ?2", Long.class)
                        .setParameter(1, ref.entityId()).setParameter(2, project).getSingleResult());
        return new ProjectRef(ref.entityId(), entity, id, project, ref.role());
    }

    /** The caller, if it is a server administrator; 403 otherwise. */
    public Caller serverAdmin() {
        Caller caller = caller();
        if (!caller.admin()) {
            throw ApiException.forbidden("This needs a server administrator");
        }
        return caller;
    }

    /** An entity (user or team) on which the caller has at least {@code required}; unknown entity: 404. */
    @Transactional
    public EntityRef entity(String entity, Role required) {
        ProjectRef ref = resolve(entity, null, required);
        return new EntityRef(ref.entityId(), entity, ref.role());
    }

    /**
     * An entity on which {@code caller} has at least {@code required}, for a caller known without a request of this
     * thread (the chat completions resolve theirs off the event loop); unknown entity: 404.
     */
    @Transactional
    public EntityRef entity(Caller caller, String entity, Role required) {
        long stamp = changes.stamp(); // read before the lookup: a change committed after it moves the generation
        Stored found = AccessStatements.resolve(em, entity, "", caller.userId())
                .orElseThrow(() -> ApiException.notFound("Entity " + entity + " not found"));
        if (stamp != AccessChanges.UNTRUSTED) {
            entityRoles.put(caller.userId() + "\n" + entity, new Remembered(found.id(), found.role(), stamp));
        }
        ProjectRef ref = authorize(caller, entity, null, found.id(), null, found.role(), required);
        return new EntityRef(ref.entityId(), entity, ref.role());
    }

    /**
     * {@link #entity(Caller, String, Role)} answered from memory, without I/O (for the chat completions' event loop):
     * the role looked up there since the last access change ({@link AccessChanges}), decided again now; null when there
     * is none, and the caller then asks {@link #entity(Caller, String, Role)} off the event loop.
     */
    public EntityRef rememberedEntity(Caller caller, String entity, Role required) {
        Remembered known = entityRoles.getIfPresent(caller.userId() + "\n" + entity);
        if (known == null || !changes.unchanged(known.stamp())) {
            return null;
        }
        ProjectRef ref = authorize(caller, entity, null, known.entityId(), null, known.role(), required);
        return new EntityRef(ref.entityId(), entity, ref.role());
    }

    /**
     * A team and the caller's role on it, null when the caller has none (server administrators are admins of every
     * team); never 403, the caller decides what the role allows. Unknown team, or a user's personal entity: 404.
     */
    @Transactional
    public EntityRef team(String team) {
        Caller caller = caller();
        Stored found = AccessStatements.resolve(em, team, "", caller.userId()).filter(Stored::team)
                .orElseThrow(() -> ApiException.notFound("Team " + team + " not found"));
        return new EntityRef(found.id(), team, caller.admin() ? Role.ADMIN : found.role());
    }

    /** A team on which the caller has at least {@code required}: 404 as {@link #team(String)}, 403 below it. */
    @Transactional
    public EntityRef team(String team, Role required) {
        EntityRef ref = team(team);
        require(ref.role(), required, team);
        return ref;
    }

    /**
     * Makes {@code caller}, whom another door of {@code accounts} authenticated (a console session, an API key checked
     * off the request's thread), the caller of this request context.
     */
    public void actAs(Caller caller) {
        current.authenticated(caller);
    }

    /**
     * Makes user {@code userId} the caller of this request context, for work done for them outside their own request (a
     * training job, claimed by a worker, acts for its creator).
     */
    @Transactional
    public Caller actFor(long userId) {
        User user = User.findById(userId);
        if (user == null) {
            throw ApiException.notFound("User " + userId + " no longer exists");
        }
        Caller caller = new Caller(userId, user.username, user.admin, 0);
        current.authenticated(caller);
        return caller;
    }

    /** A registry on which the caller has at least {@code required}; unknown registry: 404. */
    @Transactional
    public RegistryRef registry(String registry, Role required) {
        Caller caller = caller();
        Stored found = em.createQuery("""
                select new dev.fulcrum.accounts.Access$Stored(r.id, null, m.role, false) from Registry r
                left join RegistryMember m on m.registryId = r.id and m.userId = ?2
                where r.name = ?1""", Stored.class).setParameter(1, registry).setParameter(2, caller.userId())
                .getResultList().stream().findFirst()
                .orElseThrow(() -> ApiException.notFound("Registry " + registry + " not found"));
        Role role = caller.admin() ? Role.ADMIN : found.role();
        require(role, required, "registry " + registry);
        return new RegistryRef(found.id(), registry, role);
    }

    private ProjectRef resolve(String entity, String project, Role required) {
        return resolve(caller(), entity, project, required);
    }

    private ProjectRef resolve(Caller caller, String entity, String project, Role required) {
        Stored found = AccessStatements.resolve(em, entity, project == null ? "" : project, caller.userId())
                .orElseThrow(() -> ApiException.notFound("Entity " + entity + " not found"));
        return authorize(caller, entity, project, found.id(), found.projectId(), found.role(), required);
    }

    /**
     * An entity or registry, its project when one was asked for, the caller's stored role on it (or null), and whether
     * it is a team.
     */
    record Stored(long id, Long projectId, Role role, boolean team) {
    }

    /**
     * The decision, for callers that looked up the entity, the project and the caller's membership themselves (in the
     * same query as their own data, on hot paths).
     *
     * @param memberRole
     *            the caller's role on the entity as stored, or null if not a member
     */
    public ProjectRef authorize(String entity, String project, long entityId, Long projectId, String memberRole,
            Role required) {
        return authorize(entity, project, entityId, projectId, memberRole == null ? null : Role.valueOf(memberRole),
                required);
    }

    private ProjectRef authorize(String entity, String project, long entityId, Long projectId, Role memberRole,
            Role required) {
        return authorize(caller(), entity, project, entityId, projectId, memberRole, required);
    }

    private static ProjectRef authorize(Caller caller, String entity, String project, long entityId, Long projectId,
            Role memberRole, Role required) {
        Role role = caller.admin() ? Role.ADMIN : memberRole;
        require(role, required, entity);
        return new ProjectRef(entityId, entity, projectId, project, role);
    }

    static void require(Role role, Role required, String what) {
        if (role == null) {
            throw ApiException.forbidden("You are not a member of " + what);
        }
        if (!role.atLeast(required)) {
            throw ApiException.forbidden("This needs the " + required.name().toLowerCase() + " role on " + what
                    + "; you are " + role.name().toLowerCase());
        }
    }

    /** An entity and the caller's role on it. */
    public record EntityRef(long entityId, String entity, Role role) {
    }

    /** A registry and the caller's role on it. */
    public record RegistryRef(long registryId, String registry, Role role) {
    }

    /** A project and the caller's role on it. {@code projectId} is null while the project does not exist. */
    public record ProjectRef(long entityId, String entity, Long projectId, String project, Role role) {

        /** Whether the caller may write to the project (log runs, artifacts and traces): members and admins. */
        public boolean writable() {
            return role != null && role.atLeast(Role.MEMBER);
        }
    }
}
