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

import dev.fulcrum.platform.StoredJson;

/**
 * Renders an automation's payload for one event and puts it in the delivery outbox. Without a payload the body is the
 * event's variables as one flat JSON object.
 */
@ApplicationScoped
public class AutomationPayloads {

    @Inject
    TeamSecrets secrets;

    @Inject
    WebhookDeliveries deliveries;

    @Inject
    StoredJson storedJson;

    @Inject
    Automations automations;

    void enqueue(AutomationTriggers.Candidate automation, long eventId, Map<String, String> variables) {
        String body;
        if (automation.payload() == null) {
            ObjectNode plain = JsonNodeFactory.instance.objectNode();
            new TreeMap<>(variables).forEach(plain::put);
            body = storedJson.write(plain);
        } else {
            PayloadTemplate template = PayloadTemplate.parse(automation.payload());
            Map<String, String> values = new HashMap<>();
            List<String> secretNames = new ArrayList<>();
            for (String variable : template.variables()) {
                if (AutomationVariables.ACCESS_TOKEN.equals(variable)) {
                    String tokenSecret = automations.accessTokenSecret(automation.webhookId());
                    if (tokenSecret != null) {
                        values.put(variable, secrets.reveal(automation.teamEntityId(), List.of(tokenSecret))
                                .getOrDefault(tokenSecret, ""));
                    }
                } else if (AutomationVariables.SECRET_NAME.matcher(variable).matches()) {
                    secretNames.add(variable);
                } else {
                    values.put(variable, AutomationVariables.value(variables, variable));
                }
            }
            secretNames.retainAll(automation.grantedSecrets());
            Map<String, String> revealed = secretNames.isEmpty() ? Map.of()
                    : secrets.reveal(automation.teamEntityId(), secretNames);
            // a secret deleted after the automation was saved, or a token removed from the webhook, renders empty
            for (String variable : template.variables()) {
                if (!values.containsKey(variable)) {
                    values.put(variable, revealed.getOrDefault(variable, ""));
                }
            }
            body = template.render(values);
        }
        deliveries.enqueue(automation.webhookId(), automation.id(), eventId, body);
    }
}
