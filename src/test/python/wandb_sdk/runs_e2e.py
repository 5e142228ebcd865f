"""The official `wandb` SDK, unchanged, against Fulcrum (WANDB_BASE_URL, WANDB_API_KEY).

MODE=runs: a run of 1,000 steps of three metrics with config, tags, notes and a summary value, finished; the same run
resumed (resume="must") and 100 more steps logged; then `wandb.Api().run(...)` reads its state, config, summary, tags,
notes and `history()` (all rows, and sampled by key). Prints `RESULT {json}` with the run's id.
MODE=viewer: wandb.init in a project the key may only read; prints `REFUSED <error type>: <message>` when the SDK
raises its own error.
"""

import json
import os

import wandb


def metrics(step):
    return {"loss": 1.0 / (step + 1), "acc": step / 1000.0, "lr": 0.001 * (1 + step % 10)}


def runs(entity, project):
    run = wandb.init(
        entity=entity,
        project=project,
        config={"lr": 0.001, "layers": 4, "optimizer": "adam"},
        tags=["sdk", "e2e"],
        notes="logged by the wandb SDK",
    )
    run_id = run.id
    for step in range(1000):
        run.log(metrics(step))
    run.summary["best_acc"] = 0.999
    run.finish()

    resumed = wandb.init(entity=entity, project=project, id=run_id, resume="must")
    assert resumed.resumed, "the run was resumed"
    assert resumed.config["optimizer"] == "adam", "the resumed run has its config"
    for step in range(1000, 1100):
        resumed.log(metrics(step))
    resumed.finish()

    # the public API reads back what was logged
    public = wandb.Api().run(f"{entity}/{project}/{run_id}")
    assert public.state == "finished", public.state
    assert public.config["optimizer"] == "adam" and public.config["layers"] == 4, public.config
    assert public.summary["best_acc"] == 0.999, dict(public.summary)
    assert sorted(public.tags) == ["e2e", "sdk"], public.tags
    assert public.notes == "logged by the wandb SDK", public.notes
    rows = public.history(samples=5000, pandas=False)
    assert len(rows) == 1100, len(rows)
    for row in rows:
        expected = metrics(row["_step"])
        assert all(abs(row[k] - v) < 1e-12 for k, v in expected.items()), row
    sampled = public.history(keys=["loss"], samples=11, pandas=False)
    assert len(sampled) == 11, sampled
    assert sampled[0]["_step"] == 0 and sampled[-1]["_step"] == 1099, sampled
    assert all(set(row) == {"_step", "loss"} for row in sampled), sampled
    print("RESULT " + json.dumps({"run_id": run_id, "history_rows": len(rows)}))


def viewer(entity, project):
    try:
        run = wandb.init(entity=entity, project=project)
    except Exception as e:  # the SDK's own error type is what the test checks
        print(f"REFUSED {type(e).__module__}.{type(e).__name__}: {e}")
        return
    run.finish()
    raise SystemExit("a viewer's wandb.init was not refused")


if __name__ == "__main__":
    mode = os.environ["MODE"]
    {"runs": runs, "viewer": viewer}[mode](os.environ["ENTITY"], os.environ["PROJECT"])
