package dev.fulcrum.support;

import java.util.UUID;
import java.util.function.Supplier;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import io.quarkus.arc.Arc;
import io.quarkus.arc.ManagedContext;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.ApiKeys;
import dev.fulcrum.accounts.Caller;
import dev.fulcrum.accounts.PlatformEntity;
import dev.fulcrum.accounts.Registries;
import dev.fulcrum.accounts.Registry;
import dev.fulcrum.accounts.RegistryMember;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.accounts.Teams;
import dev.fulcrum.accounts.User;
import dev.fulcrum.accounts.Users;

/** Users, keys and teams for tests, made through the services. */
@ApplicationScoped
public class Fixtures {

    @Inject
    Users users;

    @Inject
    ApiKeys apiKeys;

    @Inject
    Teams teams;

    @Inject
    Registries registries;

    @Inject
    Access access;

    public record Account(User user, String key) {
        public String name() {
            return user.username;
        }
    }

    /**
     * Calls a service in a request of its own, as {@code account} (null: a request without a caller), for what no HTTP
     * request can reach.
     */
    public <T> T asCaller(Account account, Supplier<T> call) {
        ManagedContext context = Arc.container().requestContext();
        context.activate();
        try {
            if (account != null) {
                access.actAs(new Caller(account.user().id, account.name(), false, 0));
            }
            return call.get();
        } finally {
            context.terminate();
        }
    }

    public static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    public Account user(String prefix) {
        User user = users.create(unique(prefix), null, false);
        return new Account(user, apiKeys.create(user.id, "test").secret());
    }

    public PlatformEntity team(String prefix, Account admin) {
        return teams.create(unique(prefix), admin.user().id);
    }

    public void member(PlatformEntity team, Account account, Role role) {
        teams.setMember(team.id, account.user().id, role);
    }

    public Registry registry(String prefix, Account admin) {
        return registries.create(unique(prefix), null, admin.user().id);
    }

    /** Adds the account to the registry with that role (the API needs a registry admin as caller). */
    @Transactional
    public void registryMember(Registry registry, Account account, Role role) {
        RegistryMember member = RegistryMember.of(registry.id, account.user().id);
        member.role = role;
        member.persist();
    }

    /**
     * A team made by its own admin, with a member and a viewer, its project {@code traces} (as {@code team/traces}),
     * and an outsider of no team: the callers an access test sends each request as.
     */
    public record Lab(String project, Account member, Account viewer, Account outsider) {
    }

    public Lab lab(String prefix) {
        Account member = user(prefix);
        PlatformEntity team = team(prefix + "-lab", user(prefix + "-admin"));
        member(team, member, Role.MEMBER);
        Account viewer = user(prefix + "-viewer");
        member(team, viewer, Role.VIEWER);
        return new Lab(team.name + "/traces", member, viewer, user(prefix + "-outsider"));
    }
}
