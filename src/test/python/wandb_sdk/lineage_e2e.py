"""Lineage through the official `wandb` SDK, unchanged, against Fulcrum (WANDB_BASE_URL, WANDB_API_KEY).

The run `producer` logs two versions (`data` and `model`) in ENTITY/PROJECT; the run `consumer` (same project) uses
`data:latest`; the run `outsider` (in OTHER_ENTITY/OTHER_PROJECT, a project readers of PROJECT may not read) uses
`data:v0` and `model:latest`. Then `wandb.Api()` reads `run.logged_artifacts()` (also in pages of one),
`run.used_artifacts()`, `artifact.logged_by()` and `artifact.used_by()`. Prints `RESULT {json}`.
"""

import json
import os
import tempfile

import wandb


def log_version(run, name, kind, text):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, f"{name}.txt")
        with open(path, "w") as out:
            out.write(text)
        artifact = wandb.Artifact(name, type=kind)
        artifact.add_file(path)
        run.log_artifact(artifact).wait()


def names(artifacts):
    return [artifact.name for artifact in artifacts]


def main(entity, project, other_entity, other_project):
    producer = wandb.init(entity=entity, project=project, name="producer")
    log_version(producer, "data", "dataset", "rows of data\n")
    log_version(producer, "model", "model", "weights\n")
    producer.finish()

    consumer = wandb.init(entity=entity, project=project, name="consumer")
    consumer.use_artifact(f"{entity}/{project}/data:latest")
    consumer.finish()

    outsider = wandb.init(entity=other_entity, project=other_project, name="outsider")
    outsider.use_artifact(f"{entity}/{project}/data:v0")
    outsider.use_artifact(f"{entity}/{project}/model:latest")
    outsider.finish()

    api = wandb.Api()
    path = f"{entity}/{project}"
    logged = api.run(f"{path}/{producer.id}").logged_artifacts()
    assert names(logged) == ["data:v0", "model:v0"], names(logged)
    assert len(logged) == 2, len(logged)
    paged = names(api.run(f"{path}/{producer.id}").logged_artifacts(per_page=1))
    assert paged == ["data:v0", "model:v0"], paged
    assert names(api.run(f"{path}/{producer.id}").used_artifacts()) == []
    assert names(api.run(f"{path}/{consumer.id}").used_artifacts()) == ["data:v0"]
    assert names(api.run(f"{path}/{consumer.id}").logged_artifacts()) == []
    outsider_used = names(api.run(f"{other_entity}/{other_project}/{outsider.id}").used_artifacts())
    assert outsider_used == ["data:v0", "model:v0"], outsider_used

    data = api.artifact(f"{path}/data:v0")
    creator = data.logged_by()
    assert creator is not None and creator.id == producer.id, creator
    assert creator.entity == entity and creator.project == project
    users = sorted((run.project, run.id) for run in data.used_by())
    assert users == sorted([(project, consumer.id), (other_project, outsider.id)]), users
    model_users = [run.id for run in api.artifact(f"{path}/model:v0").used_by()]
    assert model_users == [outsider.id], model_users

    print(
        "RESULT "
        + json.dumps(
            {
                "producer": producer.id,
                "consumer": consumer.id,
                "outsider": outsider.id,
                "data": data.id,
                "logged": names(logged),
            }
        )
    )


if __name__ == "__main__":
    main(os.environ["ENTITY"], os.environ["PROJECT"], os.environ["OTHER_ENTITY"], os.environ["OTHER_PROJECT"])
