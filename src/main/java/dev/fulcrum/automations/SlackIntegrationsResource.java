package dev.fulcrum.automations;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.automations.SlackIntegrations.SlackInput;
import dev.fulcrum.automations.WebhookSender.Outcome;
import dev.fulcrum.automations.api.SlackIntegrationsApi;
import dev.fulcrum.automations.api.model.SlackIntegration;
import dev.fulcrum.automations.api.model.SlackIntegrationSettings;
import dev.fulcrum.automations.api.model.SlackIntegrationTest;
import dev.fulcrum.automations.api.model.SlackIntegrationTestResult;
import dev.fulcrum.automations.api.model.SlackIntegrationUpdate;

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
    public Response updateSlackIntegration(String team, Long integrationId, SlackIntegrationUpdate req) {
        SlackInput changes = new SlackInput(req.getName(), req.getChannel(), req.getWorkspace(),
                req.getBotTokenSecret());
        return Response.ok(shown(integrations.update(team, integrationId, changes))).build();
    }

    @Override
    public Response testSlackIntegration(String team, Long integrationId, SlackIntegrationTest req) {
        SlackIntegrations.TestResult result = integrations.test(team, integrationId,
                req == null ? null : req.getTitle(), req == null ? null : req.getMessage());
        Outcome outcome = result.outcome();
        return Response
                .ok(new SlackIntegrationTestResult().ok(outcome.succeeded()).channel(result.channel())
                        .status(outcome.status()).slackError(result.slackError()).ts(result.ts()).body(outcome.body())
                        .bodyTruncated(outcome.bodyTruncated()).latencyMs(outcome.latencyMs()).error(outcome.error()))
                .build();
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
