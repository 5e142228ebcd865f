package dev.fulcrum.automations;

import java.time.OffsetDateTime;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.automations.api.WebhookDeliveriesApi;
import dev.fulcrum.automations.api.model.WebhookDeliveryState;
import dev.fulcrum.automations.api.model.WebhookRedelivered;

public class WebhookDeliveriesResource implements WebhookDeliveriesApi {

    @Inject
    Webhooks webhooks;

    @Override
    public Response listWebhookDeliveries(String team, Long webhookId, WebhookDeliveryState state, Integer limit,
            Long before) {
        return Response
                .ok(WebhooksMapper
                        .deliveryPage(webhooks.deliveries(team, webhookId, WebhooksMapper.state(state), limit, before)))
                .build();
    }

    @Override
    public Response redeliverWebhookDelivery(String team, Long webhookId, Long deliveryId) {
        return Response.accepted(WebhooksMapper.delivery(webhooks.redeliver(team, webhookId, deliveryId))).build();
    }

    @Override
    public Response redeliverFailedWebhookDeliveries(String team, Long webhookId, OffsetDateTime since) {
        return Response.accepted(new WebhookRedelivered().redelivered(webhooks.redeliverFailed(team, webhookId, since)))
                .build();
    }
}
