package dev.fulcrum.automations;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.MissingNode;

import io.quarkus.narayana.jta.QuarkusTransaction;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.EntityRef;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.automations.WebhookSender.Outcome;
import dev.fulcrum.automations.WebhookSender.Outgoing;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * A team's Slack integrations: a Slack bot token (a team secret, by name, never shown) and the channel automations post
 * to with it ({@code chat.postMessage}). Stored as rows of {@code webhooks} of kind {@code SLACK}, so that their
 * notifications go through the webhooks' outbox, retries and rights checks. Team admins create, change, test and delete
 * them; anyone on the team reads them (the token's secret by name only); using one in an automation needs the member
 * role ({@link Webhooks#usableSlack}).
 */
@ApplicationScoped
public class SlackIntegrations {

    /** A channel as Slack names it (lower-case, digits, '-', '_', '.'), or a channel id; a leading '#' is dropped. */
    private static final Pattern CHANNEL = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,79}");

    @Inject
    Access access;

    @Inject
    TeamSecrets secrets;

    @Inject
    EntityManager em;

    @Inject
    WebhookSender sender;

    @Inject
    WebhooksConfig config;

    private static final ObjectMapper ANSWERS = new ObjectMapper();

    /** A Slack integration as stored. */
    public record SlackIntegration(long id, String team, String name, String channel, String workspace,
            String botTokenSecret, OffsetDateTime createdAt) {
    }

    /** What an integration is created with; {@code workspace} may be null. */
    public record SlackInput(String name, String channel, String workspace, String botTokenSecret) {
    }

    /** The team's Slack integrations by name; any role on the team. */
    @Transactional
    public List<SlackIntegration> list(String team) {
        EntityRef scope = access.team(team, Role.VIEWER);
        return select(scope, null);
    }

    /** One of the team's Slack integrations; any role on the team; another team's or none: 404. */
    @Transactional
    public SlackIntegration get(String team, long id) {
        return find(access.team(team, Role.VIEWER), id);
    }

    /**
     * The Slack integration {@code id} as an automation that uses it shows it (no right checked: callers show it with
     * an automation the caller administers); none: 404.
     */
    @Transactional
    public SlackIntegration shown(long id) {
        TeamWebhook row = TeamWebhook.findById(id);
        if (row == null || !Webhooks.SLACK.equals(row.kind)) {
            throw ApiException.notFound("Slack integration " + id + " not found");
        }
        String team = em.createQuery("select e.name from PlatformEntity e where e.id = ?1", String.class)
                .setParameter(1, row.teamId).getSingleResult();
        return of(row, team);
    }

    /** Creates one; team admins only. */
    @Transactional
    public SlackIntegration create(String team, SlackInput input, long creatorId) {
        EntityRef scope = access.team(team, Role.ADMIN);
        String channel = validate(scope, input);
        AutomationStorage.lockName(em, "webhook", scope.entityId(), input.name());
        if (TeamWebhook.count("teamId = ?1 and name = ?2", scope.entityId(), input.name()) > 0) {
            throw ApiException
                    .conflict("Team " + team + " already has a webhook or Slack integration named " + input.name());
        }
        TeamWebhook row = new TeamWebhook();
        row.teamId = scope.entityId();
        row.kind = Webhooks.SLACK;
        row.name = input.name();
        row.url = "";
        row.slackChannel = channel;
        row.slackWorkspace = input.workspace() == null ? "" : input.workspace().strip();
        row.accessTokenSecret = input.botTokenSecret();
        row.createdBy = creatorId;
        row.persist();
        return find(scope, row.id);
    }

    /**
     * Changes one: the fields of {@code changes} that are not null replace the stored ones (a {@code workspace} of
     * {@code ""} clears it), and the result is checked as on create; team admins only. Automations that use it keep it:
     * their deliveries read its channel and bot token when they are sent.
     */
    @Transactional
    public SlackIntegration update(String team, long id, SlackInput changes) {
        EntityRef scope = access.team(team, Role.ADMIN);
        SlackIntegration current = find(scope, id);
        SlackInput merged = new SlackInput(changes.name() == null ? current.name() : changes.name(),
                changes.channel() == null ? current.channel() : changes.channel(),
                changes.workspace() == null ? current.workspace() : changes.workspace(),
                changes.botTokenSecret() == null ? current.botTokenSecret() : changes.botTokenSecret());
        String channel = validate(scope, merged);
        if (!current.name().equals(merged.name())) {
            AutomationStorage.lockName(em, "webhook", scope.entityId(), merged.name());
            if (TeamWebhook.count("teamId = ?1 and name = ?2 and id <> ?3", scope.entityId(), merged.name(), id) > 0) {
                throw ApiException.conflict(
                        "Team " + team + " already has a webhook or Slack integration named " + merged.name());
            }
        }
        TeamWebhook row = TeamWebhook.findById(id);
        row.name = merged.name();
        row.slackChannel = channel;
        row.slackWorkspace = merged.workspace().strip();
        row.accessTokenSecret = merged.botTokenSecret();
        row.updatedAt = AutomationStorage.now(em);
        return of(row, scope.entity());
    }

    /** What a test message got: Slack's answer ({@code slackError} its {@code error}, {@code ts} the message's). */
    public record TestResult(String channel, Outcome outcome, String slackError, String ts) {
    }

    /**
     * Posts a test message with the integration's bot token to its channel, as a delivery would (the sender, its SSRF
     * guard and timeouts), and waits for Slack's answer; team admins only. Without a title or message the message says
     * where it comes from. Nothing is stored; the bot token is replaced by {@code [secret NAME]} in the answer.
     */
    public TestResult test(String team, long id, String title, String message) {
        record Prepared(SlackIntegration integration, String token, String body) {
        }
        Prepared prepared = QuarkusTransaction.requiringNew().call(() -> {
            EntityRef scope = access.team(team, Role.ADMIN);
            SlackIntegration integration = find(scope, id);
            String token = secrets.reveal(scope.entityId(), List.of(integration.botTokenSecret()))
                    .get(integration.botTokenSecret());
            boolean given = title != null && !title.isEmpty() || message != null && !message.isEmpty();
            Notification note = given ? new Notification(title, message, "INFO")
                    : new Notification("", "Fulcrum test message from integration " + integration.name(), "INFO");
            return new Prepared(integration, token, note.slackBody(integration.channel()));
        });
        String channel = prepared.integration().channel();
        if (prepared.token() == null) {
            return new TestResult(channel,
                    WebhookSender.Outcome.failure(
                            "The bot token secret " + prepared.integration().botTokenSecret() + " no longer exists", 0),
                    null, null);
        }
        Outgoing outgoing = Outgoing.slack("msg_test_" + UUID.randomUUID().toString().replace("-", ""),
                config.slackPostMessageUrl(), prepared.body(), prepared.token());
        Outcome outcome = sender.await(outgoing, "Slack");
        SecretMask mask = SecretMask.of(Map.of(prepared.integration().botTokenSecret(), prepared.token()));
        JsonNode answer = answer(outcome.body());
        String slackError = answer.path("ok").asBoolean(false) ? null : answer.path("error").asText(null);
        return new TestResult(channel, outcome.masked(mask), slackError == null ? null : mask.apply(slackError, false),
                outcome.succeeded() ? answer.path("ts").asText(null) : null);
    }

    /** Slack's answer as JSON; a missing node when it is none. */
    private static JsonNode answer(String body) {
        try {
            JsonNode node = body == null ? null : ANSWERS.readTree(body);
            return node == null ? MissingNode.getInstance() : node;
        } catch (JsonProcessingException e) {
            return MissingNode.getInstance();
        }
    }

    /** Deletes one with the automations that use it and its deliveries; team admins only. */
    @Transactional
    public void delete(String team, long id) {
        find(access.team(team, Role.ADMIN), id);
        TeamWebhook.deleteById(id);
    }

    /** The channel to store (without '#'); 422 naming every broken field (create and update). */
    private String validate(EntityRef scope, SlackInput input) {
        List<Violation> problems = new ArrayList<>();
        if (input.name() == null || input.name().isBlank()) {
            problems.add(Violation.of("A name is required", "missing", "body", "name"));
        }
        String channel = input.channel() == null ? "" : input.channel().strip();
        channel = channel.startsWith("#") ? channel.substring(1) : channel;
        if (!CHANNEL.matcher(channel).matches()) {
            problems.add(
                    Violation.of("A Slack channel name (letters, digits, '-', '_', '.'; '#' may lead) or channel id,"
                            + " at most 80 characters", "value_error", "body", "channel"));
        }
        if (input.botTokenSecret() == null) {
            problems.add(Violation.of("The team secret holding the bot token is required", "missing", "body",
                    "bot_token_secret"));
        } else {
            try {
                TeamSecrets.requireName(input.botTokenSecret(), "body", "bot_token_secret");
                if (!secrets.names(scope.entityId()).contains(input.botTokenSecret())) {
                    problems.add(Violation.of("Team " + scope.entity() + " has no secret " + input.botTokenSecret(),
                            "unknown_secret", "body", "bot_token_secret"));
                }
            } catch (ApiException e) {
                problems.addAll(e.violations());
            }
        }
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems);
        }
        return channel;
    }

    private SlackIntegration find(EntityRef scope, long id) {
        List<SlackIntegration> found = select(scope, id);
        if (found.isEmpty()) {
            throw ApiException.notFound("Team " + scope.entity() + " has no Slack integration " + id);
        }
        return found.get(0);
    }

    private List<SlackIntegration> select(EntityRef scope, Long id) {
        List<TeamWebhook> rows = id == null
                ? TeamWebhook.list("teamId = ?1 and kind = ?2 order by name", scope.entityId(), Webhooks.SLACK)
                : TeamWebhook.list("id = ?1 and teamId = ?2 and kind = ?3", id, scope.entityId(), Webhooks.SLACK);
        return rows.stream().map(row -> of(row, scope.entity())).toList();
    }

    private static SlackIntegration of(TeamWebhook row, String team) {
        return new SlackIntegration(row.id, team, row.name, row.slackChannel, row.slackWorkspace, row.accessTokenSecret,
                row.createdAt);
    }
}
