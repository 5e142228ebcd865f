package dev.fulcrum.automations;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.TypedQuery;
import jakarta.transaction.Transactional;

import io.quarkus.narayana.jta.QuarkusTransaction;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.EntityRef;
import dev.fulcrum.accounts.Role;
import dev.fulcrum.automations.WebhookDeliveries.Delivery;
import dev.fulcrum.automations.WebhookDeliveries.DeliveryPage;
import dev.fulcrum.automations.WebhookSender.Outcome;
import dev.fulcrum.automations.WebhookSender.Outgoing;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Team webhooks: where automations send their requests, with which credentials. Team admins manage, test and read the
 * delivery log of their team's webhooks; members and admins of the team may use one in an automation
 * ({@link #requireUsable}), viewers may not, and putting the team's secrets into a payload needs its admin role
 * ({@link AutomationRights}).
 */
@ApplicationScoped
public class Webhooks {

    /** The variable a payload uses for the webhook's access token. */
    public static final String ACCESS_TOKEN = "ACCESS_TOKEN";
    /** The kind of a row of {@code webhooks} that is a webhook; Slack integrations are {@code SLACK}. */
    static final String GENERIC = "GENERIC";
    static final String SLACK = "SLACK";

    @Inject
    Access access;

    @Inject
    TeamSecrets secrets;

    @Inject
    SsrfGuard guard;

    @Inject
    WebhookSender sender;

    @Inject
    WebhookDeliveries deliveries;

    @Inject
    EntityManager em;

    /** What a webhook is created or updated with. {@code enabled} null: unchanged (enabled on create). */
    public record WebhookInput(String name, String url, String accessTokenSecret, String signingSecret,
            Boolean enabled) {
    }

    @Transactional
    public List<Webhook> list(String team) {
        long teamId = access.team(team, Role.ADMIN).entityId();
        return select("w.teamId = ?1 and w.kind = ?2 order by w.name", teamId, GENERIC);
    }

    @Transactional
    public Webhook get(String team, long id) {
        return find(access.team(team, Role.ADMIN), id);
    }

    @Transactional
    public Webhook create(String team, WebhookInput input, long creatorId) {
        EntityRef scope = access.team(team, Role.ADMIN);
        validate(scope, input);
        AutomationStorage.lockName(em, "webhook", scope.entityId(), input.name());
        if (TeamWebhook.count("teamId = ?1 and name = ?2", scope.entityId(), input.name()) > 0) {
            throw ApiException
                    .conflict("Team " + team + " already has a webhook or Slack integration named " + input.name());
        }
        TeamWebhook webhook = new TeamWebhook();
        webhook.teamId = scope.entityId();
        webhook.name = input.name();
        webhook.url = input.url().strip();
        webhook.accessTokenSecret = input.accessTokenSecret();
        webhook.signingSecret = input.signingSecret();
        webhook.enabled = input.enabled() == null || input.enabled();
        webhook.createdBy = creatorId;
        webhook.persist();
        return find(scope, webhook.id);
    }

    /** Replaces the settings; enabling a webhook that an endpoint disabled (410) clears the reason. */
    @Transactional
    public Webhook update(String team, long id, WebhookInput input) {
        EntityRef scope = access.team(team, Role.ADMIN);
        Webhook current = find(scope, id);
        validate(scope, input);
        boolean enabled = input.enabled() == null ? current.enabled() : input.enabled();
        if (!current.name().equals(input.name())) {
            AutomationStorage.lockName(em, "webhook", scope.entityId(), input.name());
            if (TeamWebhook.count("teamId = ?1 and name = ?2", scope.entityId(), input.name()) > 0) {
                throw ApiException
                        .conflict("Team " + team + " already has a webhook or Slack integration named " + input.name());
            }
        }
        TeamWebhook webhook = TeamWebhook.findById(id);
        webhook.name = input.name();
        webhook.url = input.url().strip();
        webhook.accessTokenSecret = input.accessTokenSecret();
        webhook.signingSecret = input.signingSecret();
        webhook.enabled = enabled;
        if (enabled) {
            webhook.disabledReason = null;
        }
        webhook.updatedAt = AutomationStorage.now(em);
        return find(scope, id);
    }

    /** Deletes the webhook with its delivery log. */
    @Transactional
    public void delete(String team, long id) {
        EntityRef scope = access.team(team, Role.ADMIN);
        find(scope, id);
        TeamWebhook.deleteById(id);
    }

    /**
     * The webhook {@code webhookId} of team {@code team}, for an automation that is to use it: the current caller must
     * have at least the member role on the team (viewers only read). 401 without a caller, 404 for an unknown team or a
     * webhook not of that team, 403 for a viewer or a non-member.
     */
    @Transactional
    public WebhookRef requireUsable(String team, long webhookId) {
        Usable usable = usable(team, webhookId);
        requireRole(usable, Role.MEMBER, AutomationRights.purpose(false));
        return usable.webhook();
    }

    /** A webhook and the caller's role on its team (null when the caller has none). */
    public record Usable(WebhookRef webhook, Role role) {
    }

    /** The webhook {@code webhookId} of team {@code team} and the caller's role there: 401, 404, never 403. */
    @Transactional
    public Usable usable(String team, long webhookId) {
        EntityRef scope = access.team(team);
        return new Usable(find(scope, webhookId).ref(), scope.role());
    }

    /**
     * The Slack integration {@code integrationId} of team {@code team} and the caller's role there: 401, 404, never 403
     * ({@link #usable} for a Slack notification).
     */
    @Transactional
    public Usable usableSlack(String team, long integrationId) {
        EntityRef scope = access.team(team);
        List<Webhook> found = select("w.id = ?1 and w.teamId = ?2 and w.kind = ?3", integrationId, scope.entityId(),
                SLACK);
        if (found.isEmpty()) {
            throw ApiException.notFound("Team " + scope.entity() + " has no Slack integration " + integrationId);
        }
        return new Usable(found.get(0).ref(), scope.role());
    }

    /** 403 naming {@code purpose} unless the caller's role on the webhook's team reaches {@code required}. */
    static void requireRole(Usable usable, Role required, String purpose) {
        String team = usable.webhook().team();
        if (usable.role() == null) {
            throw ApiException.forbidden("You are not a member of team " + team + ": " + purpose);
        }
        if (!usable.role().atLeast(required)) {
            throw ApiException.forbidden("You are " + usable.role().name().toLowerCase(java.util.Locale.ROOT)
                    + " of team " + team + ": " + purpose);
        }
    }

    /** A webhook as an automation shows it (see {@link #shown}). */
    public record Shown(long id, String team, String name, String url) {
    }

    /**
     * Webhook {@code id} as an automation that uses it shows it: to its team's admins (and server administrators) with
     * its URL, to others with only the URL's origin, since a URL may carry a token; none: 404. No other right is
     * checked: callers show it with an automation the caller administers, or check the caller's role on the team.
     */
    @Transactional
    public Shown shown(long id) {
        List<Webhook> found = select("w.id = ?1", id);
        if (found.isEmpty()) {
            throw ApiException.notFound("Webhook " + id + " not found");
        }
        Webhook webhook = found.get(0);
        Role role = access.caller().admin() ? Role.ADMIN : access.team(webhook.team()).role();
        boolean admin = role != null && role.atLeast(Role.ADMIN);
        return new Shown(webhook.id(), webhook.team(), webhook.name(), admin ? webhook.url() : origin(webhook.url()));
    }

    private static String origin(String url) {
        java.net.URI uri = java.net.URI.create(url);
        return uri.getScheme() + "://" + uri.getRawAuthority();
    }

    /**
     * The secret variables the webhook itself gives a payload: {@code ACCESS_TOKEN} when it has an access token, and
     * the names of its access-token and signing secrets. An automation's payload may use these besides the secrets
     * granted to the automation. Empty for an unknown webhook; no permission check.
     */
    @Transactional
    public Set<String> payloadSecretNames(long webhookId) {
        Set<String> names = new LinkedHashSet<>();
        for (Webhook webhook : select("w.id = ?1", webhookId)) {
            if (webhook.accessTokenSecret() != null) {
                names.add(ACCESS_TOKEN);
                names.add(webhook.accessTokenSecret());
            }
            if (webhook.signingSecret() != null) {
                names.add(webhook.signingSecret());
            }
        }
        return names;
    }

    /**
     * The values of {@link #payloadSecretNames} for rendering a payload at trigger time (secrets that no longer exist
     * are left out). No permission check: never expose the result over HTTP or in logs.
     */
    @Transactional
    public Map<String, String> payloadSecretValues(long webhookId) {
        Map<String, String> values = new HashMap<>();
        for (Webhook webhook : select("w.id = ?1", webhookId)) {
            Map<String, String> credentials = credentials(webhook);
            if (webhook.accessTokenSecret() != null && credentials.get("token") != null) {
                values.put(ACCESS_TOKEN, credentials.get("token"));
                values.put(webhook.accessTokenSecret(), credentials.get("token"));
            }
            if (webhook.signingSecret() != null && credentials.get("signing") != null) {
                values.put(webhook.signingSecret(), credentials.get("signing"));
            }
        }
        return values;
    }

    /** What a test request got, and the {@code webhook-id} it was sent with. */
    public record TestResult(String webhookId, Outcome outcome) {
    }

    /**
     * Sends the webhook's real request (headers, signature, bearer token, SSRF guard) with {@code payload} (JSON in
     * which {@code $NAME} / <code>${NAME}</code> reference the team's secrets and <code>${ACCESS_TOKEN}</code> the
     * webhook's token; {@code {}} when absent), and waits for the answer. Nothing is stored. Every secret value the
     * request carried (in the body, the bearer token, the signing secret) is replaced by {@code [secret NAME]} in the
     * answer's body, headers and error ({@link SecretMask}).
     */
    public TestResult test(String team, long id, String payload) {
        record Prepared(Outgoing outgoing, SecretMask mask) {
        }
        Prepared prepared = QuarkusTransaction.requiringNew().call(() -> {
            EntityRef scope = access.team(team, Role.ADMIN);
            Webhook webhook = find(scope, id);
            String body = "{}";
            Map<String, String> credentials = credentials(webhook);
            Map<String, String> sent = new HashMap<>();
            if (payload != null) {
                PayloadTemplate template = PayloadTemplate.parse(payload);
                Set<String> available = new HashSet<>(secrets.names(scope.entityId()));
                if (webhook.accessTokenSecret() != null) {
                    available.add(ACCESS_TOKEN);
                }
                template.requireAvailable(available, "body", "payload");
                Map<String, String> values = new HashMap<>(secrets.reveal(scope.entityId(), template.variables()));
                if (webhook.accessTokenSecret() != null) {
                    values.put(ACCESS_TOKEN, credentials.get("token"));
                }
                body = template.render(values);
                sent.putAll(values);
            }
            if (credentials.get("token") != null) {
                sent.put(webhook.accessTokenSecret(), credentials.get("token"));
            }
            if (credentials.get("signing") != null) {
                sent.put(webhook.signingSecret(), credentials.get("signing"));
            }
            return new Prepared(new Outgoing("msg_test_" + UUID.randomUUID().toString().replace("-", ""), webhook.url(),
                    body, credentials.get("token"), credentials.get("signing")), SecretMask.of(sent));
        });
        Outgoing outgoing = prepared.outgoing();
        return new TestResult(outgoing.messageId(), sender.await(outgoing, "the endpoint").masked(prepared.mask()));
    }

    /** The delivery log of a team admin's webhook, newest first. */
    @Transactional
    public DeliveryPage deliveries(String team, long id, String state, Integer limit, Long before,
            OffsetDateTime createdSince) {
        find(access.team(team, Role.ADMIN), id);
        return deliveries.listByWebhook(id, state, limit, before, createdSince);
    }

    /** Sends one delivery of the webhook again, with a fresh retry schedule. */
    @Transactional
    public Delivery redeliver(String team, long id, long deliveryId) {
        find(access.team(team, Role.ADMIN), id);
        return deliveries.redeliverOfWebhook(id, deliveryId);
    }

    /** Sends every failed delivery of the webhook created since {@code since} again; the number of them. */
    @Transactional
    public int redeliverFailed(String team, long id, OffsetDateTime since) {
        find(access.team(team, Role.ADMIN), id);
        return deliveries.redeliverFailedOfWebhook(id, since);
    }

    private Map<String, String> credentials(Webhook webhook) {
        List<String> names = new ArrayList<>();
        if (webhook.accessTokenSecret() != null) {
            names.add(webhook.accessTokenSecret());
        }
        if (webhook.signingSecret() != null) {
            names.add(webhook.signingSecret());
        }
        Map<String, String> values = secrets.reveal(webhook.teamId(), names);
        Map<String, String> credentials = new HashMap<>();
        if (webhook.accessTokenSecret() != null) {
            credentials.put("token", values.get(webhook.accessTokenSecret()));
        }
        if (webhook.signingSecret() != null) {
            credentials.put("signing", values.get(webhook.signingSecret()));
        }
        return credentials;
    }

    private void validate(EntityRef scope, WebhookInput input) {
        List<Violation> problems = new ArrayList<>();
        if (input.name() == null || input.name().isBlank()) {
            problems.add(Violation.of("A webhook name is required", "missing", "body", "name"));
        }
        if (input.url() == null || input.url().isBlank()) {
            problems.add(Violation.of("An endpoint URL is required", "missing", "body", "url"));
        } else {
            try {
                guard.checkUrl(input.url(), "body", "url");
            } catch (ApiException e) {
                problems.addAll(e.violations());
            }
        }
        Set<String> existing = null;
        for (String[] ref : new String[][] { { "access_token_secret", input.accessTokenSecret() },
                { "signing_secret", input.signingSecret() } }) {
            if (ref[1] == null) {
                continue;
            }
            try {
                TeamSecrets.requireName(ref[1], "body", ref[0]);
            } catch (ApiException e) {
                problems.addAll(e.violations());
                continue;
            }
            if (existing == null) {
                existing = secrets.names(scope.entityId());
            }
            if (!existing.contains(ref[1])) {
                problems.add(Violation.of("Team " + scope.entity() + " has no secret " + ref[1], "unknown_secret",
                        "body", ref[0]));
            }
        }
        if (!problems.isEmpty()) {
            throw ApiException.invalid(problems);
        }
    }

    private Webhook find(EntityRef scope, long id) {
        List<Webhook> found = select("w.id = ?1 and w.teamId = ?2 and w.kind = ?3", id, scope.entityId(), GENERIC);
        if (found.isEmpty()) {
            throw ApiException.notFound("Team " + scope.entity() + " has no webhook " + id);
        }
        return found.get(0);
    }

    /** The webhooks matching {@code where} (HQL over {@code w}, a {@link TeamWebhook}, with {@code ?} parameters). */
    private List<Webhook> select(String where, Object... params) {
        TypedQuery<Webhook> query = em.createQuery("""
                select new dev.fulcrum.automations.Webhook(w.id, w.teamId, e.name, w.name, w.url,
                    w.accessTokenSecret, w.signingSecret, w.enabled, w.disabledReason, w.createdAt, w.updatedAt)
                from TeamWebhook w join PlatformEntity e on e.id = w.teamId where\s""" + where, Webhook.class);
        for (int i = 0; i < params.length; i++) {
            query.setParameter(i + 1, params[i]);
        }
        return query.getResultList();
    }
}
