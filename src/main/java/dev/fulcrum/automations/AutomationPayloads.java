package dev.fulcrum.automations;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import dev.fulcrum.platform.json.StoredJson;

/**
 * Renders an automation's payload for one event, as the delivery to put in the outbox (a notification's: the body of
 * Slack's {@code chat.postMessage}, {@link Notification#slackBody}). Without a payload the body is the event's
 * variables as one flat JSON object. The secret values put into the body go with the delivery, so that what the
 * endpoint answers is stored with them masked; whether the automation may still send them is checked when it is sent
 * ({@link AutomationRights}).
 */
@ApplicationScoped
public class AutomationPayloads {

    @Inject
    TeamSecrets secrets;

    @Inject
    StoredJson storedJson;

    @Inject
    Webhooks webhooks;

    /** The delivery of the automation for one event, ready to queue. */
    DeliveryQueue.Queued render(AutomationTriggers.Candidate automation, long eventId, Map<String, String> variables) {
        String body;
        Map<String, String> sentSecrets = Map.of();
        if (automation.action() == AutomationAction.NOTIFICATION) {
            // the event's variables only (saving refused any other), rendered inside the title and message
            PayloadTemplate template = PayloadTemplate.parse(automation.payload());
            Map<String, String> values = new HashMap<>();
            for (String variable : template.variables()) {
                values.put(variable, AutomationVariables.value(variables, variable));
            }
            body = Notification.fromJson(template.render(values)).slackBody(automation.slackChannel());
        } else if (automation.payload() == null) {
            ObjectNode plain = JsonNodeFactory.instance.objectNode();
            new TreeMap<>(variables).forEach(plain::put);
            body = storedJson.write(plain);
        } else {
            PayloadTemplate template = PayloadTemplate.parse(automation.payload());
            Map<String, String> values = new HashMap<>();
            List<String> secretNames = new ArrayList<>();
            for (String variable : template.variables()) {
                if (AutomationVariables.SECRET_NAME.matcher(variable).matches()) {
                    secretNames.add(variable);
                } else {
                    values.put(variable, AutomationVariables.value(variables, variable));
                }
            }
            if (!secretNames.isEmpty()) {
                // the webhook's own secrets (ACCESS_TOKEN, its token and signing secrets), then the granted ones
                Map<String, String> secretValues = new HashMap<>(webhooks.payloadSecretValues(automation.webhookId()));
                List<String> granted = new ArrayList<>(secretNames);
                granted.retainAll(automation.grantedSecrets());
                if (!granted.isEmpty()) {
                    secretValues.putAll(secrets.reveal(automation.teamEntityId(), granted));
                }
                // a secret deleted after the automation was saved renders empty
                sentSecrets = new HashMap<>();
                for (String name : secretNames) {
                    String value = secretValues.getOrDefault(name, "");
                    values.put(name, value);
                    if (!value.isEmpty()) {
                        sentSecrets.put(name, value);
                    }
                }
            }
            body = template.render(values);
        }
        return new DeliveryQueue.Queued(automation.webhookId(), automation.id(), eventId, body, sentSecrets);
    }
}
