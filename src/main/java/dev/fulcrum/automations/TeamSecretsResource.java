package dev.fulcrum.automations;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.automations.api.TeamSecretsApi;
import dev.fulcrum.automations.api.model.TeamSecretCreate;
import dev.fulcrum.automations.api.model.TeamSecretUpdate;

public class TeamSecretsResource implements TeamSecretsApi {

    @Inject
    TeamSecrets secrets;

    @Override
    public Response listTeamSecrets(String team) {
        return Response.ok(secrets.list(team).stream().map(WebhooksMapper::secret).toList()).build();
    }

    @Override
    public Response createTeamSecret(String team, TeamSecretCreate req) {
        TeamSecretCreate body = req;
        return Response.status(Response.Status.CREATED)
                .entity(WebhooksMapper.secret(secrets.create(team, body.getName(), body.getValue()))).build();
    }

    @Override
    public Response updateTeamSecret(String team, String secret, TeamSecretUpdate req) {
        return Response.ok(WebhooksMapper.secret(secrets.update(team, secret, req.getValue()))).build();
    }

    @Override
    public Response deleteTeamSecret(String team, String secret) {
        secrets.delete(team, secret);
        return Response.noContent().build();
    }
}
