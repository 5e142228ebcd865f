package dev.fulcrum.automations;

import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

import dev.fulcrum.automations.WebhookDeliveries.Attempt;
import dev.fulcrum.automations.WebhookDeliveries.Delivery;
import dev.fulcrum.automations.WebhookDeliveries.DeliveryPage;
import dev.fulcrum.automations.WebhookSender.Outcome;
import dev.fulcrum.automations.api.model.TeamSecret;
import dev.fulcrum.automations.api.model.WebhookDeliveryAttempt;
import dev.fulcrum.automations.api.model.WebhookDeliveryPage;
import dev.fulcrum.automations.api.model.WebhookDeliveryState;
import dev.fulcrum.automations.api.model.WebhookSettings;
import dev.fulcrum.automations.api.model.WebhookTestResult;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Maps secrets, webhooks and deliveries to the API's models and back. The delivery mappings are public: the per
 * automation delivery log answers with the same models.
 */
public final class WebhooksMapper {

    private WebhooksMapper() {
    }

    static TeamSecret secret(TeamSecrets.SecretInfo secret) {
        return new TeamSecret().name(secret.name()).createdAt(secret.createdAt()).updatedAt(secret.updatedAt());
    }

    static Webhooks.WebhookInput input(WebhookSettings settings) {
        WebhookSettings body = settings;
        return new Webhooks.WebhookInput(body.getName(), body.getUrl(), body.getAccessTokenSecret(),
                body.getSigningSecret(), body.getEnabled());
    }

    static dev.fulcrum.automations.api.model.Webhook webhook(Webhook webhook) {
        return new dev.fulcrum.automations.api.model.Webhook().id(webhook.id()).team(webhook.team())
                .name(webhook.name()).url(webhook.url()).accessTokenSecret(webhook.accessTokenSecret())
                .signingSecret(webhook.signingSecret()).enabled(webhook.enabled())
                .disabledReason(webhook.disabledReason()).createdAt(webhook.createdAt()).updatedAt(webhook.updatedAt());
    }

    static WebhookTestResult testResult(String webhookId, Outcome outcome) {
        return new WebhookTestResult().ok(outcome.succeeded()).webhookId(webhookId).status(outcome.status())
                .headers(outcome.headers()).body(outcome.body()).bodyTruncated(outcome.bodyTruncated())
                .latencyMs(outcome.latencyMs()).error(outcome.error());
    }

    /** A delivery with its attempts, as the delivery logs show it. */
    public static dev.fulcrum.automations.api.model.WebhookDelivery delivery(Delivery delivery) {
        return new dev.fulcrum.automations.api.model.WebhookDelivery().id(delivery.id()).webhookId(delivery.webhookId())
                .automationId(delivery.automationId()).eventId(delivery.eventId())
                .state(WebhookDeliveryState.fromValue(delivery.state().value())).attemptCount(delivery.attemptCount())
                .createdAt(delivery.createdAt()).nextAttemptAt(delivery.nextAttemptAt())
                .completedAt(delivery.completedAt())
                .attempts(delivery.attempts().stream().map(WebhooksMapper::attempt).toList());
    }

    /** A page of a delivery log. */
    public static WebhookDeliveryPage deliveryPage(DeliveryPage page) {
        return new WebhookDeliveryPage().deliveries(page.deliveries().stream().map(WebhooksMapper::delivery).toList())
                .nextBefore(page.nextBefore());
    }

    /** The {@code since} query parameter of a bulk redelivery: an RFC 3339 date-time; 422 otherwise. */
    public static OffsetDateTime since(String since) {
        if (since == null || since.isBlank()) {
            throw ApiException.invalid(Violation.of("Field required", "missing", "query", "since"));
        }
        return time(since, "since");
    }

    /** The optional {@code created_since} filter of a delivery log; null when absent. */
    public static OffsetDateTime createdSince(String since) {
        return since == null ? null : time(since, "created_since");
    }

    private static OffsetDateTime time(String value, String parameter) {
        try {
            return OffsetDateTime.parse(value.strip());
        } catch (DateTimeParseException e) {
            throw ApiException
                    .invalid(Violation.of("Input should be an RFC 3339 date-time such as 2026-01-31T12:00:00Z",
                            "datetime_parsing", "query", parameter));
        }
    }

    private static WebhookDeliveryAttempt attempt(Attempt attempt) {
        return new WebhookDeliveryAttempt().attempt(attempt.attempt()).attemptedAt(attempt.attemptedAt())
                .status(attempt.status()).latencyMs(attempt.latencyMs()).responseBody(attempt.responseBody())
                .error(attempt.error());
    }
}
