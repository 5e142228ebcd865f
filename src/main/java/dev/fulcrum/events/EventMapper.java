package dev.fulcrum.events;

import dev.fulcrum.events.api.model.EventPage;
import dev.fulcrum.events.api.model.PlatformEvent;

/** Event log pages to API models. */
final class EventMapper {

    private EventMapper() {
    }

    static EventPage toPage(PlatformEvents.Page page) {
        return new EventPage().events(page.events().stream().map(EventMapper::toEvent).toList())
                .nextBefore(page.nextBefore());
    }

    static PlatformEvent toEvent(PlatformEvents.Event e) {
        return new PlatformEvent().id(e.id()).type(PlatformEvent.TypeEnum.fromValue(e.type().name()))
                .occurredAt(e.occurredAt()).entity(e.entity()).project(e.project()).registry(e.registry())
                .author(e.author()).payload(e.payload());
    }
}
