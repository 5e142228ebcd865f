package dev.fulcrum.accounts;

import dev.fulcrum.accounts.api.model.ApiKey;
import dev.fulcrum.accounts.api.model.ApiKeyCreated;
import dev.fulcrum.accounts.api.model.Member;
import dev.fulcrum.accounts.api.model.Project;
import dev.fulcrum.accounts.api.model.Registry;
import dev.fulcrum.accounts.api.model.Role;
import dev.fulcrum.accounts.api.model.Team;
import dev.fulcrum.accounts.api.model.User;

/**
 * Maps the accounts entities to the API's models and back. The API models import here shadow the entities of the same
 * name, which are therefore written out in full.
 */
final class AccountsMapper {

    private AccountsMapper() {
    }

    static dev.fulcrum.accounts.Role role(Role role) {
        return dev.fulcrum.accounts.Role.valueOf(role.name());
    }

    static Role role(dev.fulcrum.accounts.Role role) {
        return Role.valueOf(role.name());
    }

    static User user(dev.fulcrum.accounts.User user) {
        return new User().username(user.username).entity(user.entity.name).email(user.email).admin(user.admin)
                .createdAt(user.createdAt);
    }

    static ApiKey apiKey(dev.fulcrum.accounts.ApiKey key) {
        return new ApiKey().id(key.id).name(key.name).prefix(key.prefix).createdAt(key.createdAt)
                .lastUsedAt(key.lastUsedAt).revokedAt(key.revokedAt);
    }

    static ApiKeyCreated created(ApiKeys.Created created) {
        return new ApiKeyCreated().id(created.key().id).name(created.key().name).prefix(created.key().prefix)
                .createdAt(created.key().createdAt).key(created.secret());
    }

    static Team team(WithRole<PlatformEntity> team) {
        return new Team().name(team.value().name).createdAt(team.value().createdAt).role(role(team.role()));
    }

    static Member member(Membership membership) {
        return new Member().username(membership.username()).role(role(membership.role())).createdAt(membership.since());
    }

    static Project project(String entity, dev.fulcrum.accounts.Project project) {
        return new Project().entity(entity).name(project.name).description(project.description)
                .createdAt(project.createdAt);
    }

    static Registry registry(WithRole<dev.fulcrum.accounts.Registry> registry) {
        return new Registry().name(registry.value().name).description(registry.value().description)
                .createdAt(registry.value().createdAt).role(role(registry.role()));
    }
}
