package dev.fulcrum.console;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.accounts.api.RegistriesApi;
import dev.fulcrum.accounts.api.TeamsApi;
import dev.fulcrum.accounts.api.UsersApi;
import dev.fulcrum.accounts.api.model.Registry;
import dev.fulcrum.accounts.api.model.Role;
import dev.fulcrum.accounts.api.model.Team;
import dev.fulcrum.accounts.api.model.User;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Who the project screens (data, artifacts, training) show change forms to: those the APIs let write, i.e. members of
 * the project's entity (the user of a personal entity, a team's members and admins) or of the registry, and server
 * administrators. The API still decides every change.
 */
@ApplicationScoped
class DataRoles {

    @Inject
    UsersApi users;

    @Inject
    TeamsApi teams;

    @Inject
    RegistriesApi registries;

    boolean projectWriter(String entity) {
        User me = Pages.body(users.getMe());
        if (me.getAdmin() || me.getEntity().equals(entity)) {
            return true;
        }
        try {
            Role role = Pages.<Team> body(teams.getTeam(entity)).getRole();
            return role == Role.ADMIN || role == Role.MEMBER;
        } catch (ApiException notATeamOfMine) {
            return false;
        }
    }

    boolean registryWriter(String registry) {
        User me = Pages.body(users.getMe());
        if (me.getAdmin()) {
            return true;
        }
        for (Registry mine : Pages.<java.util.List<Registry>> body(registries.listRegistries())) {
            if (mine.getName().equals(registry)) {
                return mine.getRole() == Role.ADMIN || mine.getRole() == Role.MEMBER;
            }
        }
        return false;
    }

    /** The registries a version can be linked into: those the user is a member or admin of. */
    java.util.List<String> linkTargets() {
        return Pages.<java.util.List<Registry>> body(registries.listRegistries()).stream()
                .filter(r -> r.getRole() == Role.ADMIN || r.getRole() == Role.MEMBER).map(Registry::getName).toList();
    }
}
