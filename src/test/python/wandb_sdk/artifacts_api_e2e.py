"""The official `wandb` SDK's public API of artifacts, unchanged, against Fulcrum (WANDB_BASE_URL, WANDB_API_KEY).

A run logs three versions of the dataset `api-data` (v1 with the alias `best`), a dataset `api-extra` and a model
`api-model`, and links the model into the registry REGISTRY. Then: `Api().artifacts(type, name)` (pages of 2,
`len()`, oldest first with `order`), `Api().artifact_types(project)`, `Api().artifact_collections(project, type)`
(pages of 1), `artifact_type.collections()` and `Api().artifact_collection(type, name).artifacts()`;
`artifact.delete()` of a version with an alias is refused, with `delete_aliases=True` it goes with its aliases, and a
version without aliases is deleted as it is; the registry link is removed with `artifact.unlink()` and can no longer
be read. Prints `RESULT {json}`.
"""

import hashlib
import json
import os
import time

import wandb

DATA = "api-data"


def log(run, name, kind, text, aliases=()):
    artifact = wandb.Artifact(name, type=kind, metadata={"text": text})
    with artifact.new_file("data.txt") as f:
        f.write(text)
    logged = run.log_artifact(artifact, aliases=list(aliases))
    logged.wait()
    return logged


def refused(call):
    """The SDK's error for a call the server refuses, and how long the refusal took."""
    start = time.monotonic()
    try:
        call()
    except Exception as e:  # the SDK raises its own error type (CommError) with the server's message
        return f"{type(e).__name__}: {e}", time.monotonic() - start
    raise SystemExit("the call was not refused")


def main(entity, project, registry):
    path = f"{entity}/{project}"
    run = wandb.init(entity=entity, project=project, job_type="publish")
    texts = ["first version", "second version", "third version"]
    for i, text in enumerate(texts):
        log(run, DATA, "dataset", text, aliases=["best"] if i == 1 else ())
    log(run, "api-extra", "dataset", "another collection")
    model = log(run, "api-model", "model", "weights")
    linked = run.link_artifact(model, f"wandb-registry-{registry}/api-models")
    assert linked.version == "v0", linked.version
    run.finish()

    api = wandb.Api()
    versions = api.artifacts("dataset", f"{path}/{DATA}", per_page=2)
    assert len(versions) == 3, len(versions)
    listed = {a.version: a for a in versions}
    assert [a.version for a in versions] == ["v2", "v1", "v0"], [a.version for a in versions]
    assert listed["v2"].aliases == ["latest"], listed["v2"].aliases
    assert listed["v1"].aliases == ["best"], listed["v1"].aliases
    assert listed["v0"].aliases == [], listed["v0"].aliases
    assert listed["v1"].metadata == {"text": "second version"}, listed["v1"].metadata
    assert listed["v1"].name == f"{DATA}:v1" and listed["v1"].source_name == f"{DATA}:v1", listed["v1"].name
    assert listed["v1"].type == "dataset" and listed["v1"].size == len("second version"), listed["v1"].size
    oldest = api.artifacts("dataset", f"{path}/{DATA}", order="+versionIndex")
    assert [a.version for a in oldest] == ["v0", "v1", "v2"], [a.version for a in oldest]

    types = api.artifact_types(path)
    assert [t.name for t in types] == ["dataset", "model"], [t.name for t in types]
    collections = api.artifact_collections(path, "dataset", per_page=1)
    assert len(collections) == 2, len(collections)
    names = [c.name for c in collections]
    assert names == ["api-extra", DATA], names
    assert all(c.type == "dataset" and c.entity == entity and c.project == project for c in collections)
    by_type = [c.name for c in api.artifact_type("dataset", path).collections()]
    assert by_type == names, by_type
    assert [c.name for c in api.artifact_type("model", path).collections()] == ["api-model"]
    collection = api.artifact_collection("dataset", f"{path}/{DATA}")
    assert collection.type == "dataset" and collection.created_at, collection.created_at
    assert [a.version for a in collection.artifacts()] == ["v2", "v1", "v0"]

    best = api.artifact(f"{path}/{DATA}:v1")
    blob = hashlib.sha256(texts[1].encode()).hexdigest()
    with_alias, seconds = refused(best.delete)
    assert "delete_aliases" in with_alias, with_alias
    still = api.artifact(f"{path}/{DATA}:best")
    assert still.version == "v1", still.version
    best.delete(delete_aliases=True)
    api.artifact(f"{path}/{DATA}:v0").delete()
    after = api.artifacts("dataset", f"{path}/{DATA}")
    assert [a.version for a in after] == ["v2"] and len(after) == 1, [a.version for a in after]
    gone, _ = refused(lambda: wandb.Api().artifact(f"{path}/{DATA}:best"))

    link = api.artifact(f"wandb-registry-{registry}/api-models:v0")
    assert link.is_link and link.source_name == "api-model:v0", link.source_name
    link.unlink()
    unlinked, _ = refused(lambda: wandb.Api().artifact(f"wandb-registry-{registry}/api-models:v0"))
    assert wandb.Api().artifact(f"{path}/api-model:v0").version == "v0"
    print(
        "RESULT "
        + json.dumps(
            {
                "refused": with_alias,
                "refused_seconds": seconds,
                "gone": gone,
                "unlinked": unlinked,
                "deleted_blob": blob,
                "kept_blob": hashlib.sha256(texts[2].encode()).hexdigest(),
            }
        )
    )


if __name__ == "__main__":
    main(os.environ["ENTITY"], os.environ["PROJECT"], os.environ["REGISTRY"])
