package dev.fulcrum.automations;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.automations.SlackIntegrations.SlackInput;
import dev.fulcrum.automations.api.SlackIntegrationsApi;
import dev.fulcrum.automations.api.model.SlackIntegration;
import dev.fulcrum.automations.api.model.SlackIntegrationSettings;

public class SlackIntegrationsResource implements SlackIntegrationsApi {

    @Inject
    SlackIntegrations integrations;

    @Inject
    Access access;

    @Override
    public Response listSlackIntegrations(String team) {
        return Response.ok(integrations.list(team).stream().map(SlackIntegrationsResource::shown).toList()).build();
    }

    @Override
    public Response createSlackIntegration(String team, SlackIntegrationSettings req) {
        SlackIntegrations.SlackIntegration created = integrations.create(team,
                new SlackInput(req.getName(), req.getChannel(), req.getWorkspace(), req.getBotTokenSecret()),
                access.caller().userId());
        return Response.status(Response.Status.CREATED).entity(shown(created)).build();
    }

    @Override
    public Response getSlackIntegration(String team, Long integrationId) {
        return Response.ok(shown(integrations.get(team, integrationId))).build();
    }

    @Override
    public Response deleteSlackIntegration(String team, Long integrationId) {
        integrations.delete(team, integrationId);
        return Response.noContent().build();
    }

    private static SlackIntegration shown(SlackIntegrations.SlackIntegration integration) {
        return new SlackIntegration().id(integration.id()).team(integration.team()).name(integration.name())
                .channel(integration.channel()).workspace(integration.workspace())
                .botTokenSecret(integration.botTokenSecret()).createdAt(integration.createdAt());
    }
}
