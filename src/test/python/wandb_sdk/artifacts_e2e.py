"""The official `wandb` SDK's artifacts, unchanged, against Fulcrum (WANDB_BASE_URL, WANDB_API_KEY).

MODE=artifacts: a run logs an artifact of three files (one of 50 MB) with the aliases `latest` and `production` and a
tag, and waits for it; another run uses it by alias and downloads it (the bytes compared); `wandb.Api().artifact(...)`
reads it by alias and by version; its metadata is changed, an alias and a tag added and a tag removed with
`artifact.save()`. Prints `RESULT {json}`.
MODE=download: `wandb.Api().artifact(ARTIFACT, type=TYPE).download()` of a version the SDK did not log (written by
the REST API or by a training job); prints `DOWNLOADED {json}`, each file's path and SHA-256.
MODE=big: a run logs an artifact of one file of BIG_BYTES bytes (default 2 GiB, the smallest the SDK's wandb-core
uploads in parts: its threshold is a constant, no setting lowers it), mostly sparse with a distinct random MiB in each
100 MiB part (BIG_DENSE=1: random throughout, as bench/big-artifacts.sh has it), and another run downloads it; the
hashes are compared. Prints `BIG {json}`: size, SHA-256 and the seconds of the upload, the download and (BIG_DENSE=1)
a plain `cp` of the same file.
MODE=viewer: `wandb.init` + `log_artifact` in a project the key may only read (the SDK's init, which creates the run,
is refused first); prints `REFUSED <error type>: <message>`.
"""

import filecmp
import hashlib
import json
import os
import random
import shutil
import subprocess
import tempfile
import time

import wandb

NAME = "sdk-data"


def files(root):
    """Three files: two small ones and one of 50 MB (seeded, so a test can rebuild it)."""
    paths = {
        "notes.txt": os.path.join(root, "notes.txt"),
        "conf/params.json": os.path.join(root, "params.json"),
        "weights.bin": os.path.join(root, "weights.bin"),
    }
    with open(paths["notes.txt"], "w") as f:
        f.write("logged by the wandb SDK\n")
    with open(paths["conf/params.json"], "w") as f:
        json.dump({"lr": 0.001, "layers": 4}, f)
    rng = random.Random(25)
    with open(paths["weights.bin"], "wb") as f:
        for _ in range(50):
            f.write(rng.randbytes(1 << 20))
    return paths


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def artifacts(entity, project):
    source = tempfile.mkdtemp()
    paths = files(source)
    run = wandb.init(entity=entity, project=project, job_type="upload")
    artifact = wandb.Artifact(NAME, type="dataset", description="three files", metadata={"rows": 3})
    for name, path in paths.items():
        artifact.add_file(path, name=name)
    logged = run.log_artifact(artifact, aliases=["latest", "production"], tags=["candidate"])
    logged.wait()
    assert logged.version == "v0", logged.version
    assert set(logged.aliases) >= {"latest", "production"}, logged.aliases
    run.finish()

    consumer = wandb.init(entity=entity, project=project, job_type="train")
    used = consumer.use_artifact(f"{entity}/{project}/{NAME}:production")
    target = tempfile.mkdtemp()
    root = used.download(root=target)
    for name, path in paths.items():
        assert filecmp.cmp(path, os.path.join(root, name), shallow=False), name
    consumer.finish()

    api = wandb.Api()
    by_alias = api.artifact(f"{entity}/{project}/{NAME}:production")
    by_version = api.artifact(f"{entity}/{project}/{NAME}:v0", type="dataset")
    assert by_alias.id == by_version.id, (by_alias.id, by_version.id)
    assert by_version.metadata == {"rows": 3}, by_version.metadata
    assert by_version.description == "three files", by_version.description
    assert sorted(by_version.tags) == ["candidate"], by_version.tags
    assert by_version.size == sum(os.path.getsize(p) for p in paths.values()), by_version.size

    by_version.metadata["provenance"] = "sdk"
    by_version.aliases.append("staging")
    by_version.tags.append("reviewed")
    by_version.tags.remove("candidate")
    by_version.save()
    saved = api.artifact(f"{entity}/{project}/{NAME}:staging")
    assert saved.metadata == {"rows": 3, "provenance": "sdk"}, saved.metadata
    assert sorted(saved.tags) == ["reviewed"], saved.tags
    assert {"latest", "production", "staging"} <= set(saved.aliases), saved.aliases
    print(
        "RESULT "
        + json.dumps({"version": saved.version, "id": saved.id, "weights_sha256": sha256(paths["weights.bin"])})
    )


def download(entity, project):
    artifact = wandb.Api().artifact(f"{entity}/{project}/{os.environ['ARTIFACT']}", type=os.environ["TYPE"])
    root = artifact.download(root=tempfile.mkdtemp())
    found = {}
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            found[os.path.relpath(path, root)] = sha256(path)
    print("DOWNLOADED " + json.dumps(found, sort_keys=True))


def big(entity, project):
    size = int(os.environ.get("BIG_BYTES", str(2 << 30)))
    source = tempfile.mkdtemp(dir=os.environ.get("BIG_DIR"))
    path = os.path.join(source, "big.bin")
    rng = random.Random(41)
    dense = os.environ.get("BIG_DENSE") == "1"
    with open(path, "wb") as f:
        f.truncate(size)
        for offset in range(0, size, 1 << 20 if dense else 100 << 20):
            f.seek(offset)
            f.write(rng.randbytes(min(1 << 20, size - offset)))
    expected = sha256(path)
    copied = None
    if dense:
        started = time.monotonic()
        subprocess.run(["cp", path, path + ".copy"], check=True)
        os.sync()
        copied = time.monotonic() - started
        os.remove(path + ".copy")
    started = time.monotonic()
    run = wandb.init(entity=entity, project=project, job_type="upload")
    artifact = wandb.Artifact("big", type="model")
    artifact.add_file(path, name="big.bin")
    run.log_artifact(artifact).wait()
    run.finish()
    uploaded = time.monotonic() - started
    os.remove(path)

    started = time.monotonic()
    consumer = wandb.init(entity=entity, project=project, job_type="download")
    root = consumer.use_artifact(f"{entity}/{project}/big:latest").download(root=tempfile.mkdtemp(dir=source))
    consumer.finish()
    downloaded = time.monotonic() - started
    got = os.path.join(root, "big.bin")
    assert os.path.getsize(got) == size, os.path.getsize(got)
    found = sha256(got)
    assert found == expected, (found, expected)
    shutil.rmtree(source)
    print(
        "BIG "
        + json.dumps(
            {
                "bytes": size,
                "sha256": found,
                "upload_seconds": uploaded,
                "download_seconds": downloaded,
                "cp_seconds": copied,
            }
        )
    )


def viewer(entity, project):
    try:
        run = wandb.init(entity=entity, project=project)
        artifact = wandb.Artifact(NAME, type="dataset")
        with artifact.new_file("x.txt") as f:
            f.write("x")
        run.log_artifact(artifact).wait()
    except Exception as e:  # the SDK's own error type is what the test checks
        print(f"REFUSED {type(e).__module__}.{type(e).__name__}: {e}")
        return
    raise SystemExit("a viewer's log_artifact was not refused")


if __name__ == "__main__":
    mode = os.environ["MODE"]
    modes = {"artifacts": artifacts, "download": download, "big": big, "viewer": viewer}
    modes[mode](os.environ["ENTITY"], os.environ["PROJECT"])
