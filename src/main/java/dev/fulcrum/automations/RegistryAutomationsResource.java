package dev.fulcrum.automations;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.automations.api.RegistryAutomationsApi;
import dev.fulcrum.automations.api.model.AutomationCreate;
import dev.fulcrum.automations.api.model.AutomationUpdate;
import dev.fulcrum.automations.api.model.WebhookRedelivered;

public class RegistryAutomationsResource implements RegistryAutomationsApi {

    @Inject
    Automations automations;

    @Override
    public Response listRegistryAutomations(String registry) {
        return Response.ok(AutomationMapper.toList(automations.list(automations.registry(registry)))).build();
    }

    @Override
    public Response createRegistryAutomation(String registry, AutomationCreate body) {
        return Response.status(Response.Status.CREATED).entity(AutomationMapper
                .toAutomation(automations.create(automations.registry(registry), AutomationMapper.toDraft(body))))
                .build();
    }

    @Override
    public Response getRegistryAutomation(String registry, Long automation) {
        return Response.ok(AutomationMapper.toAutomation(automations.get(automations.registry(registry), automation)))
                .build();
    }

    @Override
    public Response updateRegistryAutomation(String registry, Long automation, AutomationUpdate body) {
        return Response
                .ok(AutomationMapper.toAutomation(
                        automations.update(automations.registry(registry), automation, AutomationMapper.toDraft(body))))
                .build();
    }

    @Override
    public Response deleteRegistryAutomation(String confirm, String registry, Long automation) {
        return Response.ok(
                AutomationMapper.toAutomation(automations.delete(automations.registry(registry), automation, confirm)))
                .build();
    }

    @Override
    public Response listRegistryAutomationDeliveries(String registry, Long automation, String state, Integer limit,
            Long before, String createdSince) {
        return Response.ok(WebhooksMapper.deliveryPage(automations.deliveries(automations.registry(registry),
                automation, state, limit, before, WebhooksMapper.createdSince(createdSince)))).build();
    }

    @Override
    public Response redeliverRegistryAutomationDelivery(String registry, Long automation, Long deliveryId) {
        return Response
                .accepted(WebhooksMapper
                        .delivery(automations.redeliver(automations.registry(registry), automation, deliveryId)))
                .build();
    }

    @Override
    public Response redeliverFailedRegistryAutomationDeliveries(String since, String registry, Long automation) {
        return Response
                .accepted(new WebhookRedelivered().redelivered(automations
                        .redeliverFailed(automations.registry(registry), automation, WebhooksMapper.since(since))))
                .build();
    }
}
