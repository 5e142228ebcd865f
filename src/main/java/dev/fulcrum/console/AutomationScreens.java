package dev.fulcrum.console;

import java.util.ArrayList;
import java.util.List;
import java.util.StringJoiner;

import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.validation.ConstraintViolationException;
import jakarta.ws.rs.core.Response;

import io.quarkus.qute.TemplateInstance;

import dev.fulcrum.accounts.api.TeamsApi;
import dev.fulcrum.accounts.api.model.Role;
import dev.fulcrum.accounts.api.model.Team;
import dev.fulcrum.automations.api.SlackIntegrationsApi;
import dev.fulcrum.automations.api.TeamSecretsApi;
import dev.fulcrum.automations.api.WebhooksApi;
import dev.fulcrum.automations.api.model.Automation;
import dev.fulcrum.automations.api.model.AutomationLastDelivery;
import dev.fulcrum.automations.api.model.AutomationMetricChange;
import dev.fulcrum.automations.api.model.AutomationMetricThreshold;
import dev.fulcrum.automations.api.model.AutomationMetricZscore;
import dev.fulcrum.automations.api.model.AutomationUpdate;
import dev.fulcrum.automations.api.model.AutomationWeaveMetric;
import dev.fulcrum.automations.api.model.SlackIntegration;
import dev.fulcrum.automations.api.model.TeamSecret;
import dev.fulcrum.automations.api.model.Webhook;
import dev.fulcrum.platform.errors.ApiException;

/** The automation screens, the same for a project's and a registry's automations (see {@link AutomationScope}). */
@RequestScoped
public class AutomationScreens {

    static final List<String> PROJECT_EVENTS = List.of("ADD_ARTIFACT_ALIAS", "ADD_ARTIFACT_TAG", "REMOVE_ARTIFACT_TAG",
            "ADD_COLLECTION_TAG", "REMOVE_COLLECTION_TAG", "LINK_ARTIFACT", "UNLINK_ARTIFACT", "CREATE_ARTIFACT",
            "RUN_METRIC_THRESHOLD", "RUN_METRIC_CHANGE", "RUN_METRIC_ZSCORE", "RUN_STATE", "WEAVE_METRIC_THRESHOLD");
    static final List<String> REGISTRY_EVENTS = PROJECT_EVENTS.subList(0, 7);

    @Inject
    ConsoleRequest console;

    @Inject
    TeamsApi teams;

    @Inject
    WebhooksApi webhooks;

    @Inject
    SlackIntegrationsApi slack;

    @Inject
    TeamSecretsApi secrets;

    Response list(AutomationScope scope) {
        return Pages.page(() -> listPage(scope));
    }

    private TemplateInstance listPage(AutomationScope scope) {
        List<ConsoleTemplates.Row> rows = new ArrayList<>();
        for (Automation automation : scope.list()) {
            AutomationLastDelivery last = automation.getLastDelivery();
            String outcome = last != null ? last.getState() + ", " + last.getCreatedAt()
                    : automation.getLastFiredAt() != null ? "fired, " + automation.getLastFiredAt() : "none yet";
            rows.add(new ConsoleTemplates.Row(automation, condition(automation), outcome));
        }
        return ConsoleTemplates.automations(scope, rows);
    }

    static String condition(Automation automation) {
        StringJoiner parts = new StringJoiner("; ");
        if (automation.getAliasRegex() != null && !automation.getAliasRegex().isEmpty()) {
            parts.add("alias matches " + automation.getAliasRegex());
        }
        if (automation.getTagRegex() != null && !automation.getTagRegex().isEmpty()) {
            parts.add("tag matches " + automation.getTagRegex());
        }
        if (automation.getCollection() != null && !automation.getCollection().isEmpty()) {
            parts.add("collection " + automation.getCollection());
        }
        AutomationMetricThreshold threshold = automation.getMetricThreshold();
        if (threshold != null) {
            parts.add(threshold.getAggregation() + " of " + threshold.getMetric() + " over " + threshold.getWindow()
                    + " " + threshold.getComparison() + " " + threshold.getThreshold());
        }
        AutomationMetricChange change = automation.getMetricChange();
        if (change != null) {
            parts.add(change.getAggregation() + " of " + change.getMetric() + " over " + change.getWindow()
                    + " changes " + change.getDirection() + " by " + change.getAmount() + " (" + change.getChangeType()
                    + ")");
        }
        AutomationMetricZscore zscore = automation.getMetricZscore();
        if (zscore != null) {
            parts.add("z-score of " + zscore.getMetric() + " against the " + zscore.getWindow() + " values before it, "
                    + zscore.getDirection() + " by " + zscore.getThreshold() + " standard deviations");
        }
        AutomationWeaveMetric weave = automation.getWeaveMetric();
        if (weave != null) {
            parts.add(weave.getAggregation() + " of " + weave.getMetric() + " of " + weave.getOpName() + " over "
                    + (weave.getWindowSeconds() != null ? weave.getWindowSeconds() + " s"
                            : weave.getWindow() + " values")
                    + " " + weave.getComparison() + " " + weave.getThreshold());
        }
        if (automation.getRunStates() != null && !automation.getRunStates().isEmpty()) {
            parts.add("run becomes " + String.join(" or ", automation.getRunStates()));
        }
        if (automation.getRunFilter() != null) {
            if (automation.getRunFilter().getCreator() != null) {
                parts.add("created by " + automation.getRunFilter().getCreator());
            }
            if (automation.getRunFilter().getNameRegex() != null) {
                parts.add("run name matches " + automation.getRunFilter().getNameRegex());
            }
            if (automation.getRunFilter().getDisplayNameRegex() != null) {
                parts.add("display name matches " + automation.getRunFilter().getDisplayNameRegex());
            }
        }
        return parts.length() == 0 ? "every " + automation.getEvent() : parts.toString();
    }

    Response newForm(AutomationScope scope, String event) {
        return Pages.page(() -> formPage(scope, null, AutomationForm.blank(event)));
    }

    Response edit(AutomationScope scope, long id, String state, Long before, String createdSince) {
        return Pages.page(() -> {
            Automation automation = scope.get(id);
            return formPage(scope, automation, AutomationForm.of(automation), state, before, createdSince);
        });
    }

    private TemplateInstance formPage(AutomationScope scope, Automation existing, AutomationForm form) {
        return formPage(scope, existing, form, null, null, null);
    }

    private TemplateInstance formPage(AutomationScope scope, Automation existing, AutomationForm form, String state,
            Long before, String createdSince) {
        List<ConsoleTemplates.Target> targets = new ArrayList<>();
        List<ConsoleTemplates.SlackTarget> slackTargets = new ArrayList<>();
        List<String> usableTeams = new ArrayList<>();
        List<ConsoleTemplates.TeamSecrets> teamSecrets = new ArrayList<>();
        for (Team team : Pages.<List<Team>> body(teams.listTeams())) {
            if (team.getRole() == Role.VIEWER) {
                continue;
            }
            usableTeams.add(team.getName());
            // a team's Slack integrations are read by anyone on the team
            for (SlackIntegration integration : Pages
                    .<List<SlackIntegration>> body(slack.listSlackIntegrations(team.getName()))) {
                slackTargets.add(new ConsoleTemplates.SlackTarget(team.getName(), integration,
                        team.getName() + ":" + integration.getId()));
            }
            if (team.getRole() == Role.ADMIN) {
                // listing a team's webhooks and secrets is a team-admin read in the API
                for (Webhook webhook : Pages.<List<Webhook>> body(webhooks.listWebhooks(team.getName()))) {
                    targets.add(new ConsoleTemplates.Target(team.getName(), webhook,
                            team.getName() + ":" + webhook.getId()));
                }
                List<TeamSecret> names = Pages.body(secrets.listTeamSecrets(team.getName()));
                if (!names.isEmpty()) {
                    teamSecrets.add(new ConsoleTemplates.TeamSecrets(team.getName(),
                            String.join(", ", names.stream().map(TeamSecret::getName).toList())));
                }
            }
        }
        DeliveryLog log = existing == null ? null
                : DeliveryLog.of(scope.path() + "/" + existing.getId(), state, createdSince,
                        scope.deliveries(existing.getId(), Pages.blankToNull(state), 50, before,
                                DeliveryLog.createdSince(createdSince)));
        return ConsoleTemplates.automation(scope, existing, form, scope.events(), targets, slackTargets,
                List.of("INFO", "WARN", "ERROR"), usableTeams, teamSecrets, PayloadVariables.ALL,
                PayloadVariables.STARTERS, log);
    }

    Response create(AutomationScope scope, AutomationForm form) {
        try {
            Automation created = scope.create(form.create());
            return Pages.seeOther(scope.path() + "/" + created.getId());
        } catch (ApiException e) {
            console.failed(e);
            return Pages.again(Pages.status(e), () -> formPage(scope, null, form));
        } catch (Pages.FormException e) {
            console.failed(e.api());
            return Pages.again(422, () -> formPage(scope, null, form));
        } catch (ConstraintViolationException e) {
            // a value the contract's constraints refuse (a z-score threshold of 0, a collection name too long)
            ApiException refused = Pages.refusal(e);
            console.failed(refused);
            return Pages.again(Pages.status(refused), () -> formPage(scope, null, form));
        }
    }

    Response update(AutomationScope scope, long id, AutomationForm form) {
        return Pages.act(console, () -> scope.update(id, form.update()), scope.path() + "/" + id,
                () -> formPage(scope, scope.get(id), form));
    }

    Response setEnabled(AutomationScope scope, long id, boolean enabled) {
        return Pages.act(console, () -> scope.update(id, new AutomationUpdate().enabled(enabled)), scope.path(),
                () -> listPage(scope));
    }

    Response delete(AutomationScope scope, long id, String confirm) {
        return Pages.act(console, () -> scope.delete(id, confirm == null ? "" : confirm), scope.path(),
                () -> listPage(scope));
    }

    Response redeliver(AutomationScope scope, long id, long delivery) {
        return Pages.act(console, () -> scope.redeliver(id, delivery), scope.path() + "/" + id,
                () -> formPage(scope, scope.get(id), AutomationForm.of(scope.get(id))));
    }

    Response redeliverFailed(AutomationScope scope, long id, String since) {
        return Pages.act(console, () -> scope.redeliverFailed(id, DeliveryLog.since(since)), scope.path() + "/" + id,
                () -> formPage(scope, scope.get(id), AutomationForm.of(scope.get(id))));
    }
}
