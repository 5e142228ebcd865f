"""The official `wandb` SDK's registry links, unchanged, against Fulcrum (WANDB_BASE_URL, WANDB_API_KEY).

MODE=link: a run links a new artifact with `run.link_artifact(artifact, "wandb-registry-REGISTRY/COLLECTION",
aliases=["staging"])` (the SDK logs it first), logs a second version and links it with `artifact.link(...)`; then
`wandb.Api().artifact(...)` reads the links back by the organization's path (`fulcrum/wandb-registry-...:v0`) and by
the short path (`wandb-registry-...:latest`), and the first is downloaded and compared byte for byte. Prints
`RESULT {json}`.
MODE=viewer: `wandb.Api().artifact(ARTIFACT).link(...)` by a key that may only read the artifact's project; prints
`REFUSED <error type>: <message>`.
"""

import filecmp
import json
import os
import tempfile

import wandb


def target():
    return f"wandb-registry-{os.environ['REGISTRY']}/{os.environ['COLLECTION']}"


def link(entity, project):
    source = tempfile.mkdtemp()
    weights = os.path.join(source, "weights.bin")
    with open(weights, "wb") as f:
        f.write(os.urandom(1 << 20))
    run = wandb.init(entity=entity, project=project, job_type="publish")
    first = wandb.Artifact("sdk-model", type="model", metadata={"epochs": 3})
    first.add_file(weights, name="weights.bin")
    linked = run.link_artifact(first, target(), aliases=["staging"])
    assert linked.version == "v0", linked.version
    assert "staging" in linked.aliases, linked.aliases

    second = wandb.Artifact("sdk-model", type="model")
    with second.new_file("weights.bin") as f:
        f.write("second")
    logged = run.log_artifact(second)
    logged.wait()
    relinked = logged.link(target())
    assert relinked.version == "v1", relinked.version
    run.finish()

    api = wandb.Api()
    by_org = api.artifact(f"fulcrum/{target()}:v0")
    assert by_org.version == "v0", by_org.version
    assert by_org.type == "model", by_org.type
    assert by_org.metadata == {"epochs": 3}, by_org.metadata
    assert "staging" in by_org.aliases, by_org.aliases
    assert by_org.source_name == "sdk-model:v0", by_org.source_name
    assert by_org.source_entity == entity, by_org.source_entity
    latest = api.artifact(f"{target()}:latest")
    assert latest.version == "v1", latest.version
    assert latest.source_name == "sdk-model:v1", latest.source_name
    root = by_org.download(root=tempfile.mkdtemp())
    assert filecmp.cmp(weights, os.path.join(root, "weights.bin"), shallow=False)
    print(
        "RESULT "
        + json.dumps(
            {
                "linked": linked.name,
                "relinked": relinked.name,
                "latest": latest.version,
                "entity": by_org.entity,
                "project": by_org.project,
            }
        )
    )


def viewer(entity, project):
    try:
        wandb.Api().artifact(f"{entity}/{project}/{os.environ['ARTIFACT']}").link(target())
    except Exception as e:  # the SDK's own error type is what the test checks
        print(f"REFUSED {type(e).__module__}.{type(e).__name__}: {e}")
        return
    raise SystemExit("a viewer's link was not refused")


if __name__ == "__main__":
    mode = os.environ["MODE"]
    {"link": link, "viewer": viewer}[mode](os.environ["ENTITY"], os.environ["PROJECT"])
