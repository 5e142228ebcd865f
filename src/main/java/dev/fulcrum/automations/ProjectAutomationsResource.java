package dev.fulcrum.automations;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.automations.api.ProjectAutomationsApi;
import dev.fulcrum.automations.api.model.AutomationCreate;
import dev.fulcrum.automations.api.model.AutomationUpdate;
import dev.fulcrum.automations.api.model.WebhookRedelivered;

public class ProjectAutomationsResource implements ProjectAutomationsApi {

    @Inject
    Automations automations;

    @Override
    public Response listProjectAutomations(String entity, String project) {
        return Response.ok(AutomationMapper.toList(automations.list(automations.project(entity, project)))).build();
    }

    @Override
    public Response createProjectAutomation(String entity, String project, AutomationCreate body) {
        return Response.status(Response.Status.CREATED)
                .entity(AutomationMapper.toAutomation(
                        automations.create(automations.project(entity, project), AutomationMapper.toDraft(body))))
                .build();
    }

    @Override
    public Response getProjectAutomation(String entity, String project, Long automation) {
        return Response
                .ok(AutomationMapper.toAutomation(automations.get(automations.project(entity, project), automation)))
                .build();
    }

    @Override
    public Response updateProjectAutomation(String entity, String project, Long automation, AutomationUpdate body) {
        return Response.ok(AutomationMapper.toAutomation(
                automations.update(automations.project(entity, project), automation, AutomationMapper.toDraft(body))))
                .build();
    }

    @Override
    public Response deleteProjectAutomation(String confirm, String entity, String project, Long automation) {
        return Response
                .ok(AutomationMapper
                        .toAutomation(automations.delete(automations.project(entity, project), automation, confirm)))
                .build();
    }

    @Override
    public Response listProjectAutomationDeliveries(String entity, String project, Long automation, String state,
            Integer limit, Long before, String createdSince) {
        return Response.ok(WebhooksMapper.deliveryPage(automations.deliveries(automations.project(entity, project),
                automation, state, limit, before, WebhooksMapper.createdSince(createdSince)))).build();
    }

    @Override
    public Response redeliverProjectAutomationDelivery(String entity, String project, Long automation,
            Long deliveryId) {
        return Response
                .accepted(WebhooksMapper
                        .delivery(automations.redeliver(automations.project(entity, project), automation, deliveryId)))
                .build();
    }

    @Override
    public Response redeliverFailedProjectAutomationDeliveries(String since, String entity, String project,
            Long automation) {
        return Response.accepted(new WebhookRedelivered().redelivered(automations
                .redeliverFailed(automations.project(entity, project), automation, WebhooksMapper.since(since))))
                .build();
    }
}
