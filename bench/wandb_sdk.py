"""Times the official wandb SDK against Fulcrum beside the same work through Fulcrum's REST API (issue 25 §3).

1. run.log through the file stream: ROWS rows of 10 metrics from one SDK process (wandb.init, ROWS x run.log,
   run.finish), rows/s counted until finish() returned (the SDK's queue drained and the server stored every row);
   then the same rows through POST .../runs/{run}/history in batches of 1,000.
2. A file of MB megabytes: run.log_artifact + wait() (upload) and use_artifact().download() (download), MB/s; then the
   same file through POST .../artifacts/collections/{name}/versions (multipart) and GET .../download.

Run by bench/wandb_sdk.sh (the packaged server on a fresh embedded PostgreSQL) with the test venv's interpreter;
WANDB_BASE_URL, WANDB_API_KEY and ENTITY come from it.
"""

import json
import os
import tempfile
import time
import urllib.request

import requests
import wandb

BASE = os.environ["WANDB_BASE_URL"]
KEY = os.environ["WANDB_API_KEY"]
ENTITY = os.environ["ENTITY"]
ROWS = int(os.environ.get("ROWS", "10000"))
MB = int(os.environ.get("MB", "200"))
AUTH = {"Authorization": f"Bearer {KEY}"}


def row(step):
    return {f"m{i}": (step * (i + 1)) % 997 / 997.0 for i in range(10)}


def sdk_log():
    run = wandb.init(entity=ENTITY, project="bench-log", settings=wandb.Settings(console="off"))
    start = time.monotonic()
    for step in range(ROWS):
        run.log(row(step))
    run.finish()
    seconds = time.monotonic() - start
    stored = requests.get(f"{BASE}/api/v1/entities/{ENTITY}/projects/bench-log/runs/{run.id}", headers=AUTH).json()
    assert stored["history_rows"] == ROWS, stored
    return ROWS / seconds


def rest_log():
    url = f"{BASE}/api/v1/entities/{ENTITY}/projects/bench-log/runs"
    run = requests.post(url, json={"name": "rest-log"}, headers=AUTH).json()["name"]
    start = time.monotonic()
    for first in range(0, ROWS, 1000):
        rows = [dict(row(step), _step=step) for step in range(first, min(ROWS, first + 1000))]
        requests.post(f"{url}/{run}/history", json=rows, headers=AUTH).raise_for_status()
    return ROWS / (time.monotonic() - start)


def big_file(directory):
    path = os.path.join(directory, "big.bin")
    block = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for i in range(MB):
            f.write(block[i % 256 :] + block[: i % 256])  # every MiB different, so no block repeats
    return path


def sdk_artifact(path):
    run = wandb.init(entity=ENTITY, project="bench-artifacts", settings=wandb.Settings(console="off"))
    artifact = wandb.Artifact("sdk-big", type="dataset")
    artifact.add_file(path, name="big.bin")
    start = time.monotonic()
    run.log_artifact(artifact).wait()
    upload = MB / (time.monotonic() - start)
    run.finish()
    run = wandb.init(entity=ENTITY, project="bench-artifacts", settings=wandb.Settings(console="off"))
    used = run.use_artifact(f"{ENTITY}/bench-artifacts/sdk-big:latest")
    start = time.monotonic()
    used.download(root=tempfile.mkdtemp(), skip_cache=True)
    download = MB / (time.monotonic() - start)
    run.finish()
    return upload, download


def rest_artifact(path):
    url = f"{BASE}/api/v1/entities/{ENTITY}/projects/bench-artifacts/artifacts/collections/rest-big/versions"
    start = time.monotonic()
    with open(path, "rb") as f:
        requests.post(url, files={"file": ("big.bin", f)}, data={"type": "dataset"}, headers=AUTH).raise_for_status()
    upload = MB / (time.monotonic() - start)
    start = time.monotonic()
    request = urllib.request.Request(f"{url}/v0/download?path=big.bin", headers=AUTH)
    with urllib.request.urlopen(request) as response, open(os.devnull, "wb") as sink:
        while chunk := response.read(1 << 20):
            sink.write(chunk)
    download = MB / (time.monotonic() - start)
    return upload, download


def main():
    results = {"rows": ROWS, "metrics_per_row": 10, "mb": MB}
    results["sdk_log_rows_per_s"] = round(sdk_log(), 1)
    results["rest_log_rows_per_s"] = round(rest_log(), 1)
    with tempfile.TemporaryDirectory() as directory:
        path = big_file(directory)
        up, down = sdk_artifact(path)
        results["sdk_artifact_upload_mb_per_s"], results["sdk_artifact_download_mb_per_s"] = (
            round(up, 1),
            round(down, 1),
        )
        up, down = rest_artifact(path)
        results["rest_artifact_upload_mb_per_s"], results["rest_artifact_download_mb_per_s"] = (
            round(up, 1),
            round(down, 1),
        )
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
