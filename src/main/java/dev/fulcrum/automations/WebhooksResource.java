package dev.fulcrum.automations;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.automations.api.WebhooksApi;
import dev.fulcrum.automations.api.model.WebhookRedelivered;
import dev.fulcrum.automations.api.model.WebhookSettings;
import dev.fulcrum.automations.api.model.WebhookTest;

public class WebhooksResource implements WebhooksApi {

    @Inject
    Webhooks webhooks;

    @Inject
    Access access;

    @Override
    public Response listWebhooks(String team) {
        return Response.ok(webhooks.list(team).stream().map(WebhooksMapper::webhook).toList()).build();
    }

    @Override
    public Response createWebhook(String team, WebhookSettings req) {
        Webhook created = webhooks.create(team, WebhooksMapper.input(req), access.caller().userId());
        return Response.status(Response.Status.CREATED).entity(WebhooksMapper.webhook(created)).build();
    }

    @Override
    public Response getWebhook(String team, Long webhookId) {
        return Response.ok(WebhooksMapper.webhook(webhooks.get(team, webhookId))).build();
    }

    @Override
    public Response updateWebhook(String team, Long webhookId, WebhookSettings req) {
        return Response.ok(WebhooksMapper.webhook(webhooks.update(team, webhookId, WebhooksMapper.input(req)))).build();
    }

    @Override
    public Response deleteWebhook(String team, Long webhookId) {
        webhooks.delete(team, webhookId);
        return Response.noContent().build();
    }

    @Override
    public Response testWebhook(String team, Long webhookId, WebhookTest req) {
        Webhooks.TestResult result = webhooks.test(team, webhookId, req == null ? null : req.getPayload());
        return Response.ok(WebhooksMapper.testResult(result.webhookId(), result.outcome())).build();
    }

    @Override
    public Response listWebhookDeliveries(String team, Long webhookId, String state, Integer limit, Long before,
            String createdSince) {
        return Response.ok(WebhooksMapper.deliveryPage(
                webhooks.deliveries(team, webhookId, state, limit, before, WebhooksMapper.createdSince(createdSince))))
                .build();
    }

    @Override
    public Response redeliverWebhookDelivery(String team, Long webhookId, Long deliveryId) {
        return Response.accepted(WebhooksMapper.delivery(webhooks.redeliver(team, webhookId, deliveryId))).build();
    }

    @Override
    public Response redeliverFailedWebhookDeliveries(String since, String team, Long webhookId) {
        return Response.accepted(new WebhookRedelivered()
                .redelivered(webhooks.redeliverFailed(team, webhookId, WebhooksMapper.since(since)))).build();
    }
}
