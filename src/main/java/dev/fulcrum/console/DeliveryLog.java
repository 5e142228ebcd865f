package dev.fulcrum.console;

import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;

import dev.fulcrum.automations.api.model.WebhookDelivery;
import dev.fulcrum.automations.api.model.WebhookDeliveryPage;

/**
 * One page of a delivery log (of a webhook or of an automation) as the API answers it, with the page's address for the
 * state filter, the next page and the redeliver forms.
 */
public record DeliveryLog(String path, String state, String createdSince, List<WebhookDelivery> deliveries,
        Long nextBefore) {

    static DeliveryLog of(String path, String state, String createdSince, WebhookDeliveryPage page) {
        return new DeliveryLog(path, state == null ? "" : state, createdSince == null ? "" : createdSince,
                page.getDeliveries(), page.getNextBefore());
    }

    /** The filter's local date and time (UTC) as the API's {@code created_since}; null when not given. */
    static String createdSince(String local) {
        if (local == null || local.isBlank()) {
            return null;
        }
        try {
            return LocalDateTime.parse(local.strip()).atOffset(ZoneOffset.UTC).toString();
        } catch (DateTimeParseException e) {
            throw new Pages.FormException("created_since", "Not a date and time: " + local);
        }
    }

    /** The form's local date and time (read as UTC, as the form says) as the RFC 3339 time the API takes. */
    static String since(String local) {
        if (local == null || local.isBlank()) {
            throw new Pages.FormException("since", "Give the time from which to redeliver failed deliveries");
        }
        try {
            return LocalDateTime.parse(local.strip()).atOffset(ZoneOffset.UTC).toString();
        } catch (DateTimeParseException e) {
            throw new Pages.FormException("since", "Not a date and time: " + local);
        }
    }
}
