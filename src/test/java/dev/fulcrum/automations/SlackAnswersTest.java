package dev.fulcrum.automations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import dev.fulcrum.automations.WebhookSender.Outcome;

/**
 * What Slack's answers to {@code chat.postMessage} come to ({@link WebhookSender#slackOutcome}): {@code "ok": true} a
 * success; {@code "ok": false} a failure, final unless Slack calls it transient; other statuses as a webhook's.
 */
class SlackAnswersTest {

    private static Outcome answer(int status, String body) {
        return WebhookSender.slackOutcome(
                new Outcome(status, Map.of(), body, false, 5, null, status == 429 ? Duration.ofSeconds(3) : null));
    }

    @Test
    void okIsASuccessAndOkFalseAFailureFinalUnlessTransient() {
        assertTrue(answer(200, "{\"ok\":true,\"ts\":\"1.2\"}").succeeded());
        Outcome refused = answer(200, "{\"ok\":false,\"error\":\"channel_not_found\"}");
        assertFalse(refused.succeeded());
        assertTrue(refused.permanent());
        assertEquals("Slack answered ok=false: channel_not_found", refused.error());
        assertEquals(200, refused.status());
        for (String transient_ : new String[] { "ratelimited", "internal_error", "service_unavailable" }) {
            Outcome again = answer(200, "{\"ok\":false,\"error\":\"" + transient_ + "\"}");
            assertFalse(again.succeeded() || again.permanent(), transient_);
        }
        Outcome notSlack = answer(200, "<html>proxy</html>");
        assertFalse(notSlack.succeeded() || notSlack.permanent());
        assertFalse(answer(200, "{\"ok\":false}").permanent(), "no error named: tried again");
        Outcome limited = answer(429, "{\"ok\":false,\"error\":\"ratelimited\"}");
        assertFalse(limited.succeeded() || limited.permanent());
        assertEquals(Duration.ofSeconds(3), limited.retryAfter());
    }

    @Test
    void theMessageIsEscapedAndMarkedBySeverity() {
        assertEquals("{\"channel\":\"ops\",\"text\":\":rotating_light: *a &lt;b&gt;*\\nc &amp; d\",\"mrkdwn\":true}",
                new Notification("a <b>", "c & d", "ERROR").slackBody("ops"));
        assertEquals("{\"channel\":\"ops\",\"text\":\"only a message\",\"mrkdwn\":true}",
                new Notification("", "only a message", "INFO").slackBody("ops"));
    }
}
