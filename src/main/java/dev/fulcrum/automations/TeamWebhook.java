package dev.fulcrum.automations;

import java.time.OffsetDateTime;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import org.hibernate.annotations.Generated;

import io.quarkus.hibernate.orm.panache.PanacheEntityBase;

/**
 * A team's webhook: where automations send their requests, with which of the team's secrets (by name); or, of kind
 * {@code SLACK}, a team's Slack integration (its bot token the access-token secret).
 */
@Entity
@Table(name = "webhooks")
public class TeamWebhook extends PanacheEntityBase {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    public Long id;

    @Column(name = "team_id")
    public long teamId;

    public String name;

    public String url;

    @Column(name = "access_token_secret")
    public String accessTokenSecret;

    @Column(name = "signing_secret")
    public String signingSecret;

    /** {@code GENERIC} (a webhook) or {@code SLACK} (a Slack integration, {@link SlackIntegrations}). */
    public String kind = Webhooks.GENERIC;

    /** A Slack integration's channel (a name without '#', or an id); null for a webhook. */
    @Column(name = "slack_channel")
    public String slackChannel;

    /** The name of a Slack integration's workspace, as given; null for a webhook. */
    @Column(name = "slack_workspace")
    public String slackWorkspace;

    public boolean enabled = true;

    /** Why the webhook was disabled by the platform (an endpoint answered 410); cleared when it is enabled. */
    @Column(name = "disabled_reason")
    public String disabledReason;

    @Column(name = "created_by")
    public Long createdBy;

    @Generated
    @Column(name = "created_at", insertable = false, updatable = false)
    public OffsetDateTime createdAt;

    @Generated
    @Column(name = "updated_at", insertable = false)
    public OffsetDateTime updatedAt;
}
