"""The official `wandb` SDK's public API (`wandb.Api()`), unchanged, against Fulcrum (WANDB_BASE_URL, WANDB_API_KEY).

Three runs are logged (alpha: lr 0.001, tag `base`, finished; beta: lr 0.02, tags `sweep` and `best`, finished; gamma:
lr 0.05, tag `sweep`, failed), each with 30 steps of `loss` and `acc` on even steps only. Then:
`Api().runs(path, filters=..., order=...)` with each kind of filter, paging (`per_page=1`) and `len()` (runCount);
an unsupported operator is refused; `run.scan_history()` (all keys, and `keys=[...]`: rows holding every key) in pages;
`run.update()` of tags, notes, config and summary, read back by a new `Api()`. Prints `RESULT {json}`.
"""

import json
import os

import wandb


def log_run(entity, project, name, lr, tags, exit_code):
    run = wandb.init(entity=entity, project=project, name=name, config={"lr": lr, "layers": 2}, tags=tags)
    for step in range(30):
        row = {"loss": lr * 100 / (step + 1)}
        if step % 2 == 0:
            row["acc"] = step / 30
        run.log(row)
    run.finish(exit_code=exit_code)
    return run.id


def names(runs):
    return [run.name for run in runs]


def main(entity, project):
    ids = {
        "alpha": log_run(entity, project, "alpha-1", 0.001, ["base"], 0),
        "beta": log_run(entity, project, "beta-2", 0.02, ["sweep", "best"], 0),
        "gamma": log_run(entity, project, "gamma-3", 0.05, ["sweep"], 1),
    }
    path = f"{entity}/{project}"
    api = wandb.Api()

    def listed(**kwargs):
        runs = api.runs(path, **kwargs)
        return names(runs), len(runs)

    every = api.runs(path)
    assert len(every) == 3, len(every)
    assert names(every) == ["alpha-1", "beta-2", "gamma-3"], names(every)
    assert [run.id for run in every] == [ids["alpha"], ids["beta"], ids["gamma"]]
    assert listed(filters={"state": "finished"}) == (["alpha-1", "beta-2"], 2)
    assert listed(filters={"state": "failed"}) == (["gamma-3"], 1)
    assert listed(filters={"display_name": {"$regex": "^be"}}) == (["beta-2"], 1)
    assert listed(filters={"tags": {"$in": ["best", "base"]}}) == (["alpha-1", "beta-2"], 2)
    assert listed(filters={"tags": {"$nin": ["sweep"]}}) == (["alpha-1"], 1)
    assert listed(filters={"config.lr": {"$gt": 0.01}}) == (["beta-2", "gamma-3"], 2)
    assert listed(filters={"config.lr.value": {"$lte": 0.02}}) == (["alpha-1", "beta-2"], 2)
    # the last loss is lr * 100 / 30: 0.0033, 0.0667, 0.1667
    assert listed(filters={"summary_metrics.loss": {"$lt": 0.1}}) == (["alpha-1", "beta-2"], 2)
    assert listed(filters={"$or": [{"state": "failed"}, {"tags": "base"}]}) == (["alpha-1", "gamma-3"], 2)
    assert listed(filters={"$and": [{"tags": "sweep"}, {"config.layers": {"$in": [2, 3]}}]}) == (
        ["beta-2", "gamma-3"],
        2,
    )
    assert listed(filters={"config.missing": {"$exists": False}, "state": {"$ne": "failed"}}) == (
        ["alpha-1", "beta-2"],
        2,
    )
    assert listed(order="-config.lr") == (["gamma-3", "beta-2", "alpha-1"], 3)
    assert listed(order="+summary_metrics.loss") == (["alpha-1", "beta-2", "gamma-3"], 3)
    assert listed(order="-created_at") == (["gamma-3", "beta-2", "alpha-1"], 3)
    paged = api.runs(path, per_page=1, order="display_name")
    assert names(paged) == ["alpha-1", "beta-2", "gamma-3"] and len(paged) == 3
    try:
        len(api.runs(path, filters={"state": {"$where": "1"}}))
        raise SystemExit("an unsupported operator was not refused")
    except Exception as e:  # the SDK raises its own error (WandbApiFailedError) with the server's message
        refused = f"{type(e).__name__}: {e}"
    assert "$where" in refused, refused

    alpha = api.run(f"{path}/{ids['alpha']}")
    scanned = list(alpha.scan_history(page_size=7))
    assert [row["_step"] for row in scanned] == list(range(30)), scanned
    assert all(abs(row["loss"] - 0.1 / (row["_step"] + 1)) < 1e-12 for row in scanned), scanned
    by_keys = list(alpha.scan_history(keys=["loss", "acc"], page_size=8))
    assert [row["_step"] for row in by_keys] == list(range(0, 30, 2)), by_keys
    assert all(set(row) == {"_step", "loss", "acc"} for row in by_keys), by_keys
    window = list(alpha.scan_history(keys=["loss"], min_step=10, max_step=20))
    assert [row["_step"] for row in window] == list(range(10, 20)), window

    alpha.tags.append("reviewed")
    alpha.notes = "checked by the public API"
    alpha.config["batch"] = 64
    alpha.summary["verdict"] = "good"
    alpha.update()
    again = wandb.Api().run(f"{path}/{ids['alpha']}")
    assert sorted(again.tags) == ["base", "reviewed"], again.tags
    assert again.notes == "checked by the public API", again.notes
    assert again.config["batch"] == 64 and again.config["lr"] == 0.001, again.config
    assert again.summary["verdict"] == "good", dict(again.summary)
    assert listed(filters={"tags": "reviewed"}) == (["alpha-1"], 1)
    print("RESULT " + json.dumps({"runs": ids, "scanned": len(scanned), "refused": refused}))


if __name__ == "__main__":
    main(os.environ["ENTITY"], os.environ["PROJECT"])
