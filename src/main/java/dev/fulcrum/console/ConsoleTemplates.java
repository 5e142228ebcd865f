package dev.fulcrum.console;

import java.util.List;

import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateInstance;

import dev.fulcrum.accounts.api.model.ApiKey;
import dev.fulcrum.accounts.api.model.ApiKeyCreated;
import dev.fulcrum.accounts.api.model.Member;
import dev.fulcrum.accounts.api.model.Project;
import dev.fulcrum.accounts.api.model.Registry;
import dev.fulcrum.accounts.api.model.Team;
import dev.fulcrum.accounts.api.model.User;
import dev.fulcrum.automations.api.model.Automation;
import dev.fulcrum.automations.api.model.SlackIntegration;
import dev.fulcrum.automations.api.model.SlackIntegrationTestResult;
import dev.fulcrum.automations.api.model.TeamSecret;
import dev.fulcrum.automations.api.model.Webhook;
import dev.fulcrum.automations.api.model.WebhookTestResult;
import dev.fulcrum.inference.api.model.InferenceCatalogModel;

/**
 * The console's pages (src/main/resources/templates/console), checked when the application is built. Qute escapes every
 * value it renders into HTML, so user-provided strings are always text.
 */
@CheckedTemplate(basePath = "console")
final class ConsoleTemplates {

    /** A row of the list: the automation, its condition in brief and the outcome of its last delivery. */
    public record Row(Automation automation, String condition, String lastDelivery) {
    }

    /** A webhook to pick, with the team that owns it. */
    public record Target(String team, Webhook webhook, String value) {
    }

    /** A Slack integration to pick, with the team that owns it. */
    public record SlackTarget(String team, SlackIntegration integration, String value) {
    }

    /** What a Slack integration's test message got. */
    public record SlackTest(String name, SlackIntegrationTestResult result) {
    }

    /** The secrets of a team the caller administers, which a payload may be granted. */
    public record TeamSecrets(String team, String names) {
    }

    private ConsoleTemplates() {
    }

    static native TemplateInstance signIn();

    static native TemplateInstance error(int status, String message);

    static native TemplateInstance home(User me, List<Team> teams, List<Registry> registries, List<Project> projects);

    static native TemplateInstance account(List<ApiKey> keys, ApiKeyCreated created);

    static native TemplateInstance admin(List<User> users, List<InferenceCatalogModel> models, String keyFor,
            ApiKeyCreated created);

    static native TemplateInstance team(Team team, boolean admin, List<Member> members, List<TeamSecret> secrets,
            List<Webhook> webhooks, List<SlackIntegration> slackIntegrations, SlackTest slackTest);

    static native TemplateInstance webhook(Team team, Webhook webhook, List<TeamSecret> secrets, String testPayload,
            WebhookTestResult test, DeliveryLog log);

    static native TemplateInstance automations(AutomationScope scope, List<Row> rows);

    static native TemplateInstance automation(AutomationScope scope, Automation existing, AutomationForm form,
            List<String> events, List<Target> targets, List<SlackTarget> slackTargets, List<String> severities,
            List<String> teams, List<TeamSecrets> teamSecrets, List<PayloadVariables.Variable> variables,
            List<PayloadVariables.Starter> starters, DeliveryLog log);
}
