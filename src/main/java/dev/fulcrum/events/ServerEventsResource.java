package dev.fulcrum.events;

import jakarta.inject.Inject;
import jakarta.ws.rs.core.Response;

import dev.fulcrum.events.api.ServerEventsApi;

public class ServerEventsResource implements ServerEventsApi {

    @Inject
    PlatformEvents events;

    @Override
    public Response listServerEvents(Integer limit, Long before) {
        return Response.ok(EventMapper.toPage(events.ofServer(limit, before))).build();
    }
}
