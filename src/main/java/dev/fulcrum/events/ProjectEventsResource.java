package dev.fulcrum.events;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.events.api.ProjectEventsApi;

public class ProjectEventsResource implements ProjectEventsApi {

    @Inject
    PlatformEvents events;

    @Override
    public Response listProjectEvents(String entity, String project, Integer limit, Long before) {
        return Response.ok(EventMapper.toPage(events.ofProject(entity, project, limit, before))).build();
    }
}
