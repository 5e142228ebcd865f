package dev.fulcrum.accounts;

import java.util.List;
import java.util.function.LongFunction;

import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.persistence.criteria.CriteriaBuilder;
import jakarta.persistence.criteria.CriteriaQuery;
import jakarta.persistence.criteria.Root;

import io.quarkus.hibernate.orm.panache.Panache;
import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

import dev.fulcrum.platform.errors.ApiException;

/**
 * The members of one team or registry and their roles, with the rule both share: the last admin can be neither demoted
 * nor removed. Changes lock the team or registry first, so that two admins cannot race past the rule.
 */
final class Roster<M extends Member> {

    private final Class<M> type;
    /** The attribute of {@code M} holding the id of the team or registry. */
    private final String scopeAttribute;
    private final PanacheEntityBase owner;
    private final long ownerId;
    /** Names the team or registry in messages. */
    private final String scope;
    private final LongFunction<M> create;

    private Roster(Class<M> type, String scopeAttribute, PanacheEntityBase owner, long ownerId, String scope,
            LongFunction<M> create) {
        this.type = type;
        this.scopeAttribute = scopeAttribute;
        this.owner = owner;
        this.ownerId = ownerId;
        this.scope = scope;
        this.create = create;
    }

    static Roster<EntityMember> of(PlatformEntity team) {
        return new Roster<>(EntityMember.class, "entityId", team, team.id, team.name,
                userId -> EntityMember.of(team.id, userId));
    }

    static Roster<RegistryMember> of(Registry registry) {
        return new Roster<>(RegistryMember.class, "registryId", registry, registry.id, "registry " + registry.name,
                userId -> RegistryMember.of(registry.id, userId));
    }

    /** The members, by user name. */
    List<Membership> list() {
        CriteriaBuilder cb = em().getCriteriaBuilder();
        CriteriaQuery<Membership> query = cb.createQuery(Membership.class);
        Root<M> member = query.from(type);
        Root<User> user = query.from(User.class);
        query.select(cb.construct(Membership.class, user.get("username"), member.get("role"), member.get("createdAt")))
                .where(cb.equal(user.get("id"), member.get("userId")), cb.equal(member.get(scopeAttribute), ownerId))
                .orderBy(cb.asc(user.get("username")));
        return em().createQuery(query).getResultList();
    }

    Membership get(User user) {
        return membership(user, existing(user));
    }

    /** Makes the creator of a new team or registry its first admin. */
    Membership founder(User user) {
        return persist(user, Role.ADMIN);
    }

    /** Adds the user with that role, or changes its role. */
    Membership set(User user, Role role) {
        em().lock(owner, LockModeType.PESSIMISTIC_WRITE);
        M member = find(user.id);
        if (member == null) {
            return persist(user, role);
        }
        if (role != Role.ADMIN) {
            requireAnotherAdmin(user, member);
        }
        member.role = role;
        return membership(user, member);
    }

    void remove(User user) {
        em().lock(owner, LockModeType.PESSIMISTIC_WRITE);
        M member = existing(user);
        requireAnotherAdmin(user, member);
        member.delete();
    }

    private Membership persist(User user, Role role) {
        M member = create.apply(user.id);
        member.role = role;
        member.persistAndFlush(); // reads back created_at
        return membership(user, member);
    }

    private void requireAnotherAdmin(User user, M member) {
        if (member.role == Role.ADMIN && admins() == 1) {
            throw ApiException
                    .conflict(user.username + " is the last admin of " + scope + "; make another admin first");
        }
    }

    private M existing(User user) {
        M member = find(user.id);
        if (member == null) {
            throw ApiException.notFound(user.username + " is not a member of " + scope);
        }
        return member;
    }

    private M find(long userId) {
        CriteriaBuilder cb = em().getCriteriaBuilder();
        CriteriaQuery<M> query = cb.createQuery(type);
        Root<M> member = query.from(type);
        query.where(cb.equal(member.get(scopeAttribute), ownerId), cb.equal(member.get("userId"), userId));
        return em().createQuery(query).getResultList().stream().findFirst().orElse(null);
    }

    private long admins() {
        CriteriaBuilder cb = em().getCriteriaBuilder();
        CriteriaQuery<Long> query = cb.createQuery(Long.class);
        Root<M> member = query.from(type);
        query.select(cb.count(member)).where(cb.equal(member.get(scopeAttribute), ownerId),
                cb.equal(member.get("role"), Role.ADMIN));
        return em().createQuery(query).getSingleResult();
    }

    private static EntityManager em() {
        return Panache.getEntityManager();
    }

    private static Membership membership(User user, Member member) {
        return new Membership(user.username, member.role, member.createdAt);
    }
}
