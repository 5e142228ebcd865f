package dev.fulcrum.events;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.events.api.RegistryEventsApi;

public class RegistryEventsResource implements RegistryEventsApi {

    @Inject
    PlatformEvents events;

    @Override
    public Response listRegistryEvents(String registry, Integer limit, Long before) {
        return Response.ok(EventMapper.toPage(events.ofRegistry(registry, limit, before))).build();
    }
}
