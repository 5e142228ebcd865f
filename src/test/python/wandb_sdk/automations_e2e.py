"""The official `wandb` SDK's automations, unchanged, against Fulcrum (WANDB_BASE_URL, WANDB_API_KEY).

As a team admin (ENTITY, PROJECT): makes a webhook integration (the SDK's own `CreateGenericWebhookIntegration`
document, signed with the team secret SIGNING) to HOOK_URL, finds it with `Api().webhook_integrations` and
`Api().integrations` beside the team's Slack integration (made by the test; `Api().slack_integrations`), reads the
project with `Api().project` and `Api().projects`, and creates six webhook automations, one that does nothing
(`DoNothing`, on the run's state) and one that posts to the Slack integration (`SendNotification`, on the run's state,
read back with its title, message and severity) with `Api().create_automation`: a run metric threshold
(`OnRunMetric`, mean of the last 2 `loss` values below 0.5), a z-score (the last `loss` against the 3 before it,
beyond 1 either way), a run state (`OnRunState`, finished, of the run displayed as `sdk-automated`: `RunEvent.name`),
and on the collection `sdk-model` (which the test made) an alias-added one (`OnAddArtifactAlias`, `production`), a
version-created one (`OnCreateArtifact`) and a collection-tag-added one (`OnAddCollectionTag`, `reviewed`). A run then
logs the losses, an artifact with the alias `production`, and finishes, and the collection is tagged with the SDK's
`collection.tags = [...]; collection.save()`: each automation fires once (the test's receiver checks the deliveries).
A member of the team (MEMBER_KEY) sees the Slack integration but not the webhook, and may not create one:
`REFUSED <error type>: <message>`. Then the admin lists the
automations (`automations(entity=)`, `automation(name, entity=)`, their events and payloads read back), disables one
with `update_automation`, and deletes them all but the `DoNothing` one (whose firing the test reads) with
`delete_automation`. Prints `RESULT {json}`.
"""

import json
import os

import wandb
from wandb.automations import (
    ArtifactEvent,
    DoNothing,
    EventType,
    OnAddArtifactAlias,
    OnAddCollectionTag,
    OnCreateArtifact,
    OnRunMetric,
    OnRunState,
    RunEvent,
    SendNotification,
    SendWebhook,
    SlackIntegration,
    WebhookIntegration,
)
from wandb.automations._generated import CREATE_GENERIC_WEBHOOK_INTEGRATION_GQL


def integration(api, team, url):
    created = api._service_api.execute_graphql(
        CREATE_GENERIC_WEBHOOK_INTEGRATION_GQL,
        variables={
            "input": {
                "entityName": team,
                "name": "sdk-hook",
                "urlEndpoint": url,
                "secretRef": "SIGNING",
            }
        },
    )
    made = created["result"]["integration"]
    hook = next(h for h in api.webhook_integrations(entity=team) if h.name == "sdk-hook")
    assert hook.id == made["id"] and hook.url_endpoint == url, (hook, made)
    # the team's Slack integration (made by the test through the REST API) is listed after the webhooks
    slack = next(iter(api.slack_integrations(entity=team)))
    assert isinstance(slack, SlackIntegration) and slack.channel_name == "sdk-alerts", slack
    assert slack.team_name == "Fulcrum Lab", slack
    assert [i.id for i in api.integrations(entity=team)] == [hook.id, slack.id]
    assert [type(i) for i in api.integrations(entity=team)] == [WebhookIntegration, SlackIntegration]
    return hook, slack


def create(api, project, hook, slack):
    threshold = api.create_automation(
        OnRunMetric(scope=project, filter=RunEvent.metric("loss").mean(2) < 0.5)
        >> SendWebhook.from_integration(
            hook,
            payload={
                "kind": "threshold",
                "run": "${run_name}",
                "metric": "${metric_name}",
                "value": "${metric_value}",
            },
        ),
        name="low-loss",
        description="mean loss below 0.5",
    )
    state = api.create_automation(
        # RunEvent.name is the run's display name (wandb.init(name=...))
        OnRunState(scope=project, filter=RunEvent.state.eq("finished") & RunEvent.name.eq("sdk-automated"))
        >> SendWebhook.from_integration(hook, payload={"kind": "state", "run": "${run_name}", "state": "${run_state}"}),
        name="finished",
    )
    # the collection (made by the test's upload of v0) scopes the artifact automations
    collection = api.artifact_collection("model", f"{project.entity}/{project.name}/sdk-model")
    alias = api.create_automation(
        OnAddArtifactAlias(scope=collection, filter=ArtifactEvent.alias.eq("production"))
        >> SendWebhook.from_integration(
            hook,
            payload={
                "kind": "alias",
                "alias": "${alias}",
                "version": "${artifact_version_string}",
            },
        ),
        name="to-production",
    )
    api.create_automation(
        OnAddCollectionTag(scope=collection, filter=ArtifactEvent.tag.eq("reviewed"))
        >> SendWebhook.from_integration(
            hook,
            payload={"kind": "collection-tag", "tag": "${tag}", "collection": "${artifact_collection_name}"},
        ),
        name="reviewed-model",
    )
    api.create_automation(
        OnCreateArtifact(scope=collection)
        >> SendWebhook.from_integration(hook, payload={"kind": "created", "version": "${artifact_version}"}),
        name="new-model",
    )
    zscore = api.create_automation(
        OnRunMetric(scope=project, filter=RunEvent.metric("loss").zscore(3).abs() > 1)
        >> SendWebhook.from_integration(
            hook,
            payload={
                "kind": "zscore",
                "value": "${metric_value}",
                "z": "${metric_zscore}",
                "window": "${metric_window}",
            },
        ),
        name="loss-zscore",
    )
    assert zscore.event.event_type == EventType.RUN_METRIC_ZSCORE
    quiet = api.create_automation(
        OnRunState(scope=project, filter=RunEvent.state.eq("finished")) >> DoNothing(), name="quiet"
    )
    assert quiet.action.action_type.value == "NO_OP", quiet.action
    notify = api.create_automation(
        OnRunState(scope=project, filter=RunEvent.state.eq("finished"))
        >> SendNotification.from_integration(
            slack, title="Run ${run_name} finished", text="${run_state} in ${project_name}", level="WARN"
        ),
        name="slack-finished",
    )
    assert notify.action.action_type.value == "NOTIFICATION", notify.action
    return threshold, state, alias


def trigger(entity, project):
    run = wandb.init(entity=entity, project=project, name="sdk-automated")
    for loss in (0.9, 0.8, 0.4, 0.3):
        run.log({"loss": loss})
    artifact = wandb.Artifact("sdk-model", type="model")
    with artifact.new_file("weights.bin") as f:
        f.write("weights")
    run.log_artifact(artifact, aliases=["production"]).wait()
    run.finish()
    return run.id


def tag_collection(api, entity, project):
    collection = api.artifact_collection("model", f"{entity}/{project}/sdk-model")
    collection.tags = ["reviewed", "draft"]
    collection.save()
    collection.tags = ["reviewed"]
    collection.save()
    return api.artifact_collection("model", f"{entity}/{project}/sdk-model").tags


def refused(entity, project, integration_id, slack_id):
    member = wandb.Api(api_key=os.environ["MEMBER_KEY"])
    # a member sees the team's Slack integrations, not its webhooks (their URLs are the team admins')
    assert [i.id for i in member.integrations(entity=entity)] == [slack_id]
    assert list(member.webhook_integrations(entity=entity)) == []
    event = OnRunState(scope=member.project(project, entity=entity), filter=RunEvent.state.eq("failed"))
    try:
        member.create_automation(event >> SendWebhook(integration_id=integration_id), name="members-own")
    except Exception as e:  # the SDK's own error type is what the test checks
        print(f"REFUSED {type(e).__module__}.{type(e).__name__}: {e}")
        return
    raise SystemExit("a member's automation was not refused")


def main():
    entity, name = os.environ["ENTITY"], os.environ["PROJECT"]
    api = wandb.Api()
    hook, slack = integration(api, entity, os.environ["HOOK_URL"])
    project = api.project(name, entity=entity)
    assert name in [p.name for p in api.projects(entity)], "the project is listed"
    threshold, state, alias = create(api, project, hook, slack)
    assert threshold.event.event_type == EventType.RUN_METRIC_THRESHOLD
    assert state.enabled and alias.scope.name == "sdk-model", (state, alias)
    run = trigger(entity, name)
    tags = tag_collection(api, entity, name)
    refused(entity, name, hook.id, slack.id)

    listed = sorted(a.name for a in api.automations(entity=entity))
    # without an entity the SDK walks the viewer's projects
    assert sorted(a.name for a in api.automations()) == listed
    state_read = api.automation("finished")
    assert state_read.id == state.id
    run_filter = json.loads(state_read.event.filter.run.model_dump_json())
    assert "sdk-automated" in json.dumps(run_filter) and "display_name" in json.dumps(run_filter), run_filter
    read = api.automation("low-loss", entity=entity)
    metric = read.event.filter.metric.threshold_filter
    payload = read.action.request_payload
    alias_read = api.automation("to-production", entity=entity)
    alias_filter = alias_read.event.filter.filter
    assert alias_read.scope.scope_type.value == "ARTIFACT_COLLECTION", alias_read.scope
    read.enabled = False
    disabled = api.update_automation(read)
    again = api.automation("low-loss", entity=entity)
    quiet = api.automation("quiet", entity=entity)
    notified = api.automation("slack-finished", entity=entity).action
    assert notified.integration.id == slack.id, notified
    for automation in api.automations(entity=entity):
        if automation.name != "quiet":
            api.delete_automation(automation)
    left = list(api.automations(entity=entity))
    print(
        "RESULT "
        + json.dumps(
            {
                "run": run,
                "collection_tags": tags,
                "listed": listed,
                "metric": [metric.name, metric.agg.value, metric.window, metric.cmp],
                "threshold": metric.threshold,
                "payload": payload,
                "alias_filter": json.loads(alias_filter.model_dump_json()),
                "disabled": [disabled.enabled, again.enabled],
                "left": [a.name for a in left],
                "quiet": quiet.action.action_type.value,
                "slack": [notified.title, notified.message, notified.severity.value],
            }
        )
    )


if __name__ == "__main__":
    main()
