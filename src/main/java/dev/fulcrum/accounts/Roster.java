package dev.fulcrum.accounts;

import java.time.OffsetDateTime;
import java.util.function.LongFunction;
import java.util.function.LongSupplier;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

import dev.fulcrum.platform.ApiException;

/**
 * The members of one team or registry and their roles, with the rule both share: the last admin can be neither demoted
 * nor removed. Callers lock the team or registry first, so that two admins cannot race past the rule.
 */
final class Roster<M extends PanacheEntityBase & Roster.Member> {

    /** A stored membership. */
    interface Member {
        Role role();

        void assign(Role role);

        OffsetDateTime since();
    }

    private final String scope;
    private final LongFunction<M> find;
    private final LongFunction<M> create;
    private final LongSupplier admins;

    /**
     * @param scope
     *            names the team or registry in messages
     * @param find
     *            the membership of a user id, or null
     * @param create
     *            a new, not yet persisted membership of a user id
     * @param admins
     *            counts the admins
     */
    Roster(String scope, LongFunction<M> find, LongFunction<M> create, LongSupplier admins) {
        this.scope = scope;
        this.find = find;
        this.create = create;
        this.admins = admins;
    }

    Membership get(User user) {
        return membership(user, existing(user));
    }

    /** Adds the user with that role, or changes its role. */
    Membership set(User user, Role role) {
        M member = find.apply(user.id);
        if (member == null) {
            member = create.apply(user.id);
            member.assign(role);
            member.persistAndFlush(); // reads back created_at
        } else {
            if (role != Role.ADMIN) {
                requireAnotherAdmin(user, member);
            }
            member.assign(role);
        }
        return membership(user, member);
    }

    void remove(User user) {
        M member = existing(user);
        requireAnotherAdmin(user, member);
        member.delete();
    }

    private void requireAnotherAdmin(User user, M member) {
        if (member.role() == Role.ADMIN && admins.getAsLong() == 1) {
            throw ApiException
                    .conflict(user.username + " is the last admin of " + scope + "; make another admin first");
        }
    }

    private M existing(User user) {
        M member = find.apply(user.id);
        if (member == null) {
            throw ApiException.notFound(user.username + " is not a member of " + scope);
        }
        return member;
    }

    private static Membership membership(User user, Member member) {
        return new Membership(user.username, member.role(), member.since());
    }
}
