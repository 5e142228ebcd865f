package dev.fulcrum.accounts;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.api.TeamsApi;
import dev.fulcrum.accounts.api.model.MemberUpdate;
import dev.fulcrum.accounts.api.model.TeamCreate;

public class TeamsResource implements TeamsApi {

    @Inject
    Access access;

    @Inject
    Teams teams;

    @Override
    public Response listTeams() {
        return Response.ok(teams.list().stream().map(AccountsMapper::team).toList()).build();
    }

    @Override
    public Response createTeam(TeamCreate req) {
        PlatformEntity team = teams.create(req.getName(), access.caller().userId());
        return Response.status(Response.Status.CREATED).entity(AccountsMapper.team(new WithRole<>(team, Role.ADMIN)))
                .build();
    }

    @Override
    public Response getTeam(String team) {
        return Response.ok(AccountsMapper.team(teams.get(team))).build();
    }

    @Override
    public Response deleteTeam(String team) {
        teams.delete(team);
        return Response.noContent().build();
    }

    @Override
    public Response listTeamMembers(String team) {
        return Response.ok(teams.members(team).stream().map(AccountsMapper::member).toList()).build();
    }

    @Override
    public Response getTeamMember(String team, String username) {
        return Response.ok(AccountsMapper.member(teams.member(team, username))).build();
    }

    @Override
    public Response setTeamMember(String team, String username, MemberUpdate req) {
        Role role = AccountsMapper.role(req.getRole());
        return Response.ok(AccountsMapper.member(teams.setMember(team, username, role))).build();
    }

    @Override
    public Response removeTeamMember(String team, String username) {
        teams.removeMember(team, username);
        return Response.noContent().build();
    }
}
