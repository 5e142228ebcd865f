package dev.fulcrum.wandb;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.automations.SlackIntegrations;
import dev.fulcrum.automations.Webhook;
import dev.fulcrum.automations.Webhooks;
import dev.fulcrum.wandb.WandbNodes.EntityNode;

import graphql.schema.DataFetchingEnvironment;
import graphql.schema.idl.RuntimeWiring;

/**
 * The SDK's integrations ({@code Api().integrations}, {@code webhook_integrations}, {@code slack_integrations},
 * {@code CreateGenericWebhookIntegration}) as a team's webhooks and Slack integrations of the automations service, with
 * its rights: webhooks are their team admins' (a URL may carry a token), Slack integrations anyone's on the team.
 */
@ApplicationScoped
class WandbIntegrations {

    @Inject
    Access access;

    @Inject
    Webhooks webhooks;

    @Inject
    SlackIntegrations slack;

    RuntimeWiring.Builder wire(RuntimeWiring.Builder wiring) {
        return wiring.type("Entity", type -> type.dataFetcher("integrations", this::integrations))
                .type("Mutation", type -> type.dataFetcher("createGenericWebhookIntegration", this::createIntegration))
                .type("Integration", type -> type.typeResolver(env -> env.getSchema()
                        .getObjectType(env.getObject() instanceof Map<?, ?> node && node.containsKey("channelName")
                                ? "SlackIntegration"
                                : "GenericWebhookIntegration")));
    }

    private Map<String, Object> integrations(DataFetchingEnvironment env) {
        EntityNode entity = env.getSource();
        int size = WandbPages.size(env.getArgument("first"), 50);
        int offset = WandbPages.offset(env.getArgument("after"));
        // webhooks and Slack integrations belong to teams: a personal entity has none. Webhooks are their team admins'
        // (a URL may carry a token), Slack integrations anyone's on the team
        List<Map<String, Object>> all = new ArrayList<>();
        if (entity.isTeam()) {
            List<SlackIntegrations.SlackIntegration> slacks = slack.list(entity.name());
            Role role = access.team(entity.name()).role();
            if (role != null && role.atLeast(Role.ADMIN)) {
                webhooks.list(entity.name())
                        .forEach(webhook -> all.add(webhookNode(webhook.id(), webhook.name(), webhook.url())));
            }
            slacks.forEach(integration -> all.add(slackNode(integration)));
        }
        List<Map<String, Object>> edges = new ArrayList<>();
        for (int i = offset; i < Math.min(all.size(), offset + size); i++) {
            edges.add(Map.of("node", all.get(i), "cursor", WandbPages.cursor(i)));
        }
        return WandbPages.connection(edges, offset + size < all.size(), null);
    }

    /** A Slack integration as the SDK's {@code SlackIntegration}: its workspace as {@code teamName}, its channel. */
    static Map<String, Object> slackNode(SlackIntegrations.SlackIntegration integration) {
        return Map.of("id", WandbNodes.opaque("Integration", Long.toString(integration.id())), "teamName",
                integration.workspace(), "channelName", integration.channel());
    }

    /** A team webhook as the SDK's {@code GenericWebhookIntegration}. */
    static Map<String, Object> webhookNode(long id, String name, String url) {
        return Map.of("id", WandbNodes.opaque("Integration", Long.toString(id)), "name", name, "urlEndpoint", url);
    }

    private Map<String, Object> createIntegration(DataFetchingEnvironment env) {
        Map<String, Object> input = env.getArgument("input");
        Webhook created = webhooks.create((String) input.get("entityName"),
                new Webhooks.WebhookInput((String) input.get("name"), (String) input.get("urlEndpoint"),
                        (String) input.get("accessTokenRef"), (String) input.get("secretRef"), null),
                access.caller().userId());
        Map<String, Object> payload = new HashMap<>();
        payload.put("integration", webhookNode(created.id(), created.name(), created.url()));
        payload.put("clientMutationId", input.get("clientMutationId"));
        return payload;
    }
}
