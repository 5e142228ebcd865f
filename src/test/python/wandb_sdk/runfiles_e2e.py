"""The official `wandb` SDK, unchanged, against Fulcrum (WANDB_BASE_URL, WANDB_API_KEY): a run's files and media.

A run saves a file (`run.save`), logs an image, a table, a histogram and an HTML page with a number over three steps,
prints a line and finishes. Then `wandb.Api().run(...)` lists its files (the saved one, the media, and the SDK's own
`wandb-metadata.json`, `requirements.txt`, `config.yaml`, `output.log`, `wandb-summary.json`), downloads each with
`file.download()` and compares it byte for byte with the run's local copy (`output.log`: the printed line is in it),
reads the media rows back with `run.history()`, and adds a file with the public API's `run.upload_file`. Prints
`RESULT {json}` with the run's id and its files.
"""

import json
import os
import tempfile

import numpy as np
import wandb

STEPS = 3
OWN_FILES = ["config.yaml", "output.log", "requirements.txt", "wandb-metadata.json", "wandb-summary.json"]


def main(entity, project):
    work = tempfile.mkdtemp()
    saved = os.path.join(work, "weights.bin")
    with open(saved, "wb") as out:
        out.write(os.urandom(300_000))

    run = wandb.init(entity=entity, project=project, config={"lr": 0.01})
    run.save(saved, base_path=work, policy="now")
    rng = np.random.default_rng(7)
    for step in range(STEPS):
        pixels = rng.integers(0, 255, size=(8, 8, 3), dtype=np.uint8)
        table = wandb.Table(columns=["step", "label"], data=[[step, f"row {i}"] for i in range(30)])
        run.log(
            {
                "loss": 1.0 / (step + 1),
                "img": wandb.Image(pixels, caption=f"step {step}"),
                "tbl": table,
                "h": wandb.Histogram(rng.normal(size=200), num_bins=16),
                "page": wandb.Html("<b>x</b>"),
            }
        )
    print("hello from the run", flush=True)
    local = run.dir
    run_id = run.id
    run.finish()

    debug = os.path.join(os.path.dirname(local), "logs", "debug-internal.log")
    with open(debug) as log:
        text = log.read()
    assert "CreateRunFiles returned error" not in text, "the SDK logged a CreateRunFiles error"

    public = wandb.Api().run(f"{entity}/{project}/{run_id}")
    files = {f.name: f for f in public.files()}
    names = sorted(files)
    for name in OWN_FILES + ["weights.bin"]:
        assert name in files, (name, names)
    media = [name for name in names if name.startswith("media/")]
    assert any(n.startswith("media/images/") and n.endswith(".png") for n in media), media
    assert any(n.startswith("media/table/") and n.endswith(".table.json") for n in media), media
    assert any(n.startswith("media/html/") and n.endswith(".html") for n in media), media
    assert len(public.files()) == len(names), (len(public.files()), names)

    downloads = tempfile.mkdtemp()
    for name in names:
        got = public.file(name).download(root=downloads, replace=True)
        got.close()
        with open(os.path.join(downloads, name), "rb") as f:
            served = f.read()
        assert len(served) == files[name].size, (name, len(served), files[name].size)
        if name == "output.log":
            assert b"hello from the run" in served, served
            continue
        original = saved if name == "weights.bin" else os.path.join(local, name)
        with open(original, "rb") as f:
            assert f.read() == served, f"{name} differs from the run's copy"

    # the public API's upload of a file to the finished run (createRunFiles, then a PUT to its URL)
    extra = os.path.join(work, "notes", "extra.txt")
    os.makedirs(os.path.dirname(extra))
    with open(extra, "w") as out:
        out.write("added after the run")
    uploaded = public.upload_file(extra, root=work)
    assert uploaded.name == "notes/extra.txt" and uploaded.size == len("added after the run"), uploaded
    with uploaded.download(root=downloads, replace=True) as got:
        assert got.read() == "added after the run"

    rows = public.history(samples=100, pandas=False)
    assert len(rows) == STEPS, rows
    for row in rows:
        assert row["img"]["_type"] == "image-file" and row["img"]["path"] in files, row
        assert row["tbl"]["_type"] == "table-file" and row["tbl"]["path"] in files, row
        assert row["page"]["_type"] == "html-file" and row["page"]["path"] in files, row
        assert row["h"]["_type"] == "histogram" and len(row["h"]["values"]) == 16, row
        assert abs(row["loss"] - 1.0 / (row["_step"] + 1)) < 1e-12, row
    print("RESULT " + json.dumps({"run_id": run_id, "files": names}))


if __name__ == "__main__":
    main(os.environ["ENTITY"], os.environ["PROJECT"])
