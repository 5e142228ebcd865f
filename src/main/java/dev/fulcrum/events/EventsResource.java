package dev.fulcrum.events;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.accounts.Names;
import dev.fulcrum.events.api.EventsApi;
import dev.fulcrum.events.api.model.EventPage;
import dev.fulcrum.events.api.model.PlatformEvent;

public class EventsResource implements EventsApi {

    @Inject
    PlatformEvents events;

    @Override
    public Response listProjectEvents(String entity, String project, Integer limit, Long before) {
        Names.requireEntity(entity, "path", "entity");
        Names.requireProject(project, "path", "project");
        return Response.ok(toPage(events.ofProject(entity, project, limit, before))).build();
    }

    @Override
    public Response listRegistryEvents(String registry, Integer limit, Long before) {
        Names.requireEntity(registry, "path", "registry");
        return Response.ok(toPage(events.ofRegistry(registry, limit, before))).build();
    }

    static EventPage toPage(PlatformEvents.Page page) {
        return new EventPage().events(page.events().stream().map(EventsResource::toEvent).toList())
                .nextBefore(page.nextBefore());
    }

    static PlatformEvent toEvent(PlatformEvents.Event e) {
        return new PlatformEvent().id(e.id()).type(PlatformEvent.TypeEnum.fromValue(e.type().name()))
                .occurredAt(e.occurredAt()).entity(e.entity()).project(e.project()).registry(e.registry())
                .author(e.author()).payload(e.payload());
    }
}
