package dev.fulcrum.console;

import java.util.List;

import jakarta.inject.Inject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import org.jboss.resteasy.reactive.RestForm;
import org.jboss.resteasy.reactive.RestPath;
import org.jboss.resteasy.reactive.RestQuery;

import io.quarkus.qute.TemplateInstance;
import io.smallrye.common.annotation.Blocking;

import dev.fulcrum.accounts.AuthenticatesWithSession;
import dev.fulcrum.accounts.api.TeamsApi;
import dev.fulcrum.accounts.api.model.Member;
import dev.fulcrum.accounts.api.model.MemberUpdate;
import dev.fulcrum.accounts.api.model.Role;
import dev.fulcrum.accounts.api.model.Team;
import dev.fulcrum.automations.api.SlackIntegrationsApi;
import dev.fulcrum.automations.api.TeamSecretsApi;
import dev.fulcrum.automations.api.WebhooksApi;
import dev.fulcrum.automations.api.model.SlackIntegration;
import dev.fulcrum.automations.api.model.SlackIntegrationSettings;
import dev.fulcrum.automations.api.model.SlackIntegrationTest;
import dev.fulcrum.automations.api.model.SlackIntegrationTestResult;
import dev.fulcrum.automations.api.model.TeamSecret;
import dev.fulcrum.automations.api.model.TeamSecretCreate;
import dev.fulcrum.automations.api.model.TeamSecretUpdate;
import dev.fulcrum.automations.api.model.Webhook;
import dev.fulcrum.automations.api.model.WebhookDeliveryPage;
import dev.fulcrum.automations.api.model.WebhookSettings;
import dev.fulcrum.automations.api.model.WebhookTest;
import dev.fulcrum.automations.api.model.WebhookTestResult;
import dev.fulcrum.platform.errors.ApiException;

/**
 * Team settings: members, secrets, webhooks and Slack integrations, a webhook's test request and its delivery log, a
 * Slack integration's test message. Team admins see the forms; others see what their role lets the API answer (the API
 * still decides every change).
 */
@Path("/console/teams/{team}")
@AuthenticatesWithSession
@Blocking
public class TeamPages {

    @Inject
    ConsoleRequest console;

    @Inject
    TeamsApi teams;

    @Inject
    TeamSecretsApi secrets;

    @Inject
    WebhooksApi webhooks;

    @Inject
    SlackIntegrationsApi slack;

    static String base(String team) {
        return "/console/teams/" + Pages.path(team);
    }

    @GET
    public Response settings(@RestPath String team) {
        return Pages.page(() -> settingsPage(team));
    }

    private TemplateInstance settingsPage(String team) {
        return settingsPage(team, null);
    }

    private TemplateInstance settingsPage(String team, ConsoleTemplates.SlackTest slackTest) {
        Team found = Pages.body(teams.getTeam(team));
        boolean admin = found.getRole() == Role.ADMIN;
        List<Member> members = Pages.body(teams.listTeamMembers(team));
        // secrets and webhooks are team-admin reads in the API: others are not shown them; Slack integrations are
        // read by anyone on the team
        List<TeamSecret> teamSecrets = admin ? Pages.body(secrets.listTeamSecrets(team)) : List.of();
        List<Webhook> teamWebhooks = admin ? Pages.body(webhooks.listWebhooks(team)) : List.of();
        List<SlackIntegration> integrations = Pages.body(slack.listSlackIntegrations(team));
        return ConsoleTemplates.team(found, admin, members, teamSecrets, teamWebhooks, integrations, slackTest);
    }

    @POST
    @Path("/members")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response setMember(@RestPath String team, @RestForm String username, @RestForm String role) {
        return Pages.act(console, () -> teams.setTeamMember(team, username == null ? "" : username.strip(),
                new MemberUpdate().role(role(role))), base(team), () -> settingsPage(team));
    }

    private static Role role(String role) {
        try {
            return Role.fromValue(role);
        } catch (IllegalArgumentException e) {
            throw new Pages.FormException("role", "Choose a role: admin, member or viewer");
        }
    }

    @POST
    @Path("/members/{username}/remove")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response removeMember(@RestPath String team, @RestPath String username) {
        return Pages.act(console, () -> teams.removeTeamMember(team, username), base(team), () -> settingsPage(team));
    }

    @POST
    @Path("/secrets")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response createSecret(@RestPath String team, @RestForm String name, @RestForm String value) {
        return Pages.act(console, () -> secrets.createTeamSecret(team, new TeamSecretCreate().name(name).value(value)),
                base(team), () -> settingsPage(team));
    }

    @POST
    @Path("/secrets/{secret}")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response replaceSecret(@RestPath String team, @RestPath String secret, @RestForm String value) {
        return Pages.act(console, () -> secrets.updateTeamSecret(team, secret, new TeamSecretUpdate().value(value)),
                base(team), () -> settingsPage(team));
    }

    @POST
    @Path("/secrets/{secret}/delete")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response deleteSecret(@RestPath String team, @RestPath String secret) {
        return Pages.act(console, () -> secrets.deleteTeamSecret(team, secret), base(team), () -> settingsPage(team));
    }

    @POST
    @Path("/webhooks")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response createWebhook(@RestPath String team, @RestForm String name, @RestForm String url,
            @RestForm("access_token_secret") String accessToken, @RestForm("signing_secret") String signing) {
        try {
            Webhook created = Pages.body(webhooks.createWebhook(team, new WebhookSettings().name(name).url(url)
                    .accessTokenSecret(Pages.blankToNull(accessToken)).signingSecret(Pages.blankToNull(signing))));
            return Pages.seeOther(base(team) + "/webhooks/" + created.getId());
        } catch (ApiException e) {
            console.failed(e);
            return Pages.again(Pages.status(e), () -> settingsPage(team));
        }
    }

    @GET
    @Path("/webhooks/{id}")
    public Response webhook(@RestPath String team, @RestPath Long id, @RestQuery String state, @RestQuery Long before,
            @RestQuery("created_since") String createdSince) {
        return Pages.page(() -> webhookPage(team, id, state, before, createdSince, null, null));
    }

    private TemplateInstance webhookPage(String team, Long id, String state, Long before, String testPayload,
            WebhookTestResult test) {
        return webhookPage(team, id, state, before, null, testPayload, test);
    }

    private TemplateInstance webhookPage(String team, Long id, String state, Long before, String createdSince,
            String testPayload, WebhookTestResult test) {
        Team found = Pages.body(teams.getTeam(team));
        Webhook webhook = Pages.body(webhooks.getWebhook(team, id));
        List<TeamSecret> teamSecrets = Pages.body(secrets.listTeamSecrets(team));
        WebhookDeliveryPage deliveries = Pages.body(webhooks.listWebhookDeliveries(team, id, Pages.blankToNull(state),
                50, before, DeliveryLog.createdSince(createdSince)));
        String log = base(team) + "/webhooks/" + id;
        return ConsoleTemplates.webhook(found, webhook, teamSecrets, testPayload == null ? "" : testPayload, test,
                DeliveryLog.of(log, state, createdSince, deliveries));
    }

    @POST
    @Path("/webhooks/{id}")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response updateWebhook(@RestPath String team, @RestPath Long id, @RestForm String name, @RestForm String url,
            @RestForm("access_token_secret") String accessToken, @RestForm("signing_secret") String signing,
            @RestForm String enabled) {
        return Pages.act(console,
                () -> webhooks.updateWebhook(team, id,
                        new WebhookSettings().name(name).url(url).accessTokenSecret(Pages.blankToNull(accessToken))
                                .signingSecret(Pages.blankToNull(signing)).enabled(enabled != null)),
                base(team) + "/webhooks/" + id, () -> webhookPage(team, id, null, null, null, null));
    }

    @POST
    @Path("/webhooks/{id}/delete")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response deleteWebhook(@RestPath String team, @RestPath Long id) {
        return Pages.act(console, () -> webhooks.deleteWebhook(team, id), base(team),
                () -> webhookPage(team, id, null, null, null, null));
    }

    /** Sends the test request and shows the endpoint's answer; the payload is not stored. */
    @POST
    @Path("/webhooks/{id}/test")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response testWebhook(@RestPath String team, @RestPath Long id, @RestForm String payload) {
        try {
            WebhookTestResult result = Pages
                    .body(webhooks.testWebhook(team, id, new WebhookTest().payload(Pages.blankToNull(payload))));
            return Pages.html(webhookPage(team, id, null, null, payload, result));
        } catch (ApiException e) {
            console.failed(e);
            return Pages.again(Pages.status(e), () -> webhookPage(team, id, null, null, payload, null));
        }
    }

    @POST
    @Path("/webhooks/{id}/deliveries/{delivery}/redeliver")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response redeliver(@RestPath String team, @RestPath Long id, @RestPath Long delivery) {
        return Pages.act(console, () -> webhooks.redeliverWebhookDelivery(team, id, delivery),
                base(team) + "/webhooks/" + id, () -> webhookPage(team, id, null, null, null, null));
    }

    @POST
    @Path("/webhooks/{id}/deliveries/redeliver-failed")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response redeliverFailed(@RestPath String team, @RestPath Long id, @RestForm String since) {
        return Pages.act(console, () -> webhooks.redeliverFailedWebhookDeliveries(DeliveryLog.since(since), team, id),
                base(team) + "/webhooks/" + id, () -> webhookPage(team, id, null, null, null, null));
    }

    @POST
    @Path("/slack-integrations")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response createSlackIntegration(@RestPath String team, @RestForm String name, @RestForm String channel,
            @RestForm String workspace, @RestForm("bot_token_secret") String botTokenSecret) {
        return Pages.act(console,
                () -> slack.createSlackIntegration(team,
                        new SlackIntegrationSettings().name(name).channel(channel)
                                .workspace(Pages.blankToNull(workspace)).botTokenSecret(botTokenSecret)),
                base(team) + "#slack-h", () -> settingsPage(team));
    }

    @POST
    @Path("/slack-integrations/{id}/delete")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response deleteSlackIntegration(@RestPath String team, @RestPath Long id) {
        return Pages.act(console, () -> slack.deleteSlackIntegration(team, id), base(team) + "#slack-h",
                () -> settingsPage(team));
    }

    /** Posts a test message to the integration's channel and shows Slack's answer; nothing is stored. */
    @POST
    @Path("/slack-integrations/{id}/test")
    @Consumes(MediaType.APPLICATION_FORM_URLENCODED)
    public Response testSlackIntegration(@RestPath String team, @RestPath Long id) {
        try {
            SlackIntegration integration = Pages.body(slack.getSlackIntegration(team, id));
            SlackIntegrationTestResult result = Pages
                    .body(slack.testSlackIntegration(team, id, new SlackIntegrationTest()));
            return Pages.html(settingsPage(team, new ConsoleTemplates.SlackTest(integration.getName(), result)));
        } catch (ApiException e) {
            console.failed(e);
            return Pages.again(Pages.status(e), () -> settingsPage(team));
        }
    }
}
