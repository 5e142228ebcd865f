"""Fills a running Fulcrum with one of every kind of record, through its API, for the upgrade fixture.

Run by scripts/upgrade-fixture.sh against the earlier release it started; writes what it made (names, ids, keys,
digests, expected values) as JSON for src/test/java/dev/fulcrum/platform/UpgradeIT.java to read back after today's
build has migrated the data directory. Python's standard library only.

    python3 scripts/upgrade_fixture.py BASE_URL ADMIN_KEY RECEIVER_PORT OUT.json
"""

from __future__ import annotations

import hashlib
import http.server
import json
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

TEAM = "lab"
PROJECT = "demo"
REGISTRY = "model-registry"
PROJECT_PATH = f"/api/v1/entities/{TEAM}/projects/{PROJECT}"
COLLECTION = "weights"
WEIGHTS = bytes(range(256)) * 16 + b"upgrade fixture weights\n"
SIGNING = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
TOKEN = "ghp_upgrade-fixture-access-token"
DEPLOY_TOKEN = "deploy-token-sealed-by-the-old-release"
UPSTREAM_KEY = "sk-upstream-key-sealed-by-the-old-release"
WORKER_BASE = "upgrade/worker-base"
ADAPTER = b'{"r": 4, "lora_alpha": 8, "target_modules": ["q_proj"]}\n'


class Api:
    """JSON over HTTP with a bearer key; any unexpected status stops the script with the answer."""

    def __init__(self, base: str, key: str) -> None:
        self.base = base
        self.key = key

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        expect: int = 200,
        key: str | None = None,
        raw: bytes | None = None,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> Any:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Authorization", "Bearer " + (key or self.key))
        if data is not None:
            request.add_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                status, text = response.status, response.read()
        except urllib.error.HTTPError as error:
            status, text = error.code, error.read()
        if status != expect:
            sys.exit(f"{method} {path}: {status} (expected {expect}): {text[:2000]!r}")
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text

    def upload(self, path: str, fields: dict[str, str], files: dict[str, bytes], expect: int = 201) -> Any:
        boundary = "upgrade-" + uuid.uuid4().hex
        parts = []
        for name, value in fields.items():
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
        for name, content in files.items():
            head = (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                "Content-Type: application/octet-stream\r\n\r\n"
            )
            parts.append(head.encode() + content + b"\r\n")
        parts.append(f"--{boundary}--\r\n".encode())
        return self.call(
            "POST", path, raw=b"".join(parts), expect=expect, content_type=f"multipart/form-data; boundary={boundary}"
        )


class Receiver(http.server.BaseHTTPRequestHandler):
    """Answers 200 to every delivery and counts them."""

    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        Receiver.received.append({"path": self.path, "body": body.decode()})
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the standard library's name)
        return


def wait_for(what: str, check: Any, seconds: float = 120) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        answer = check()
        if answer:
            return answer
        time.sleep(0.5)
    sys.exit(f"gave up waiting for {what}")


def accounts(api: Api, made: dict[str, Any]) -> None:
    for username in ("ada", "bob"):
        api.call("POST", "/api/v1/users", {"username": username, "email": f"{username}@example.com"}, 201)
    ada_key = api.call("POST", "/api/v1/users/ada/api-keys", {"name": "ada-laptop"}, 201)
    bob_key = api.call("POST", "/api/v1/users/bob/api-keys", {"name": "bob-laptop"}, 201)
    revoked = api.call("POST", "/api/v1/users/me/api-keys", {"name": "revoked-ci"}, 201)
    api.call("DELETE", f"/api/v1/users/me/api-keys/{revoked['id']}", expect=204)
    admin_key = api.call("POST", "/api/v1/users/me/api-keys", {"name": "admin-ci"}, 201)
    api.call("POST", "/api/v1/teams", {"name": TEAM}, 201)
    api.call("PUT", f"/api/v1/teams/{TEAM}/members/ada", {"role": "admin"})
    api.call("PUT", f"/api/v1/teams/{TEAM}/members/bob", {"role": "viewer"})
    api.call("POST", f"/api/v1/entities/{TEAM}/projects", {"name": PROJECT}, 201)
    api.call("POST", "/api/v1/registries", {"name": REGISTRY}, 201)
    api.call("PUT", f"/api/v1/registries/{REGISTRY}/members/ada", {"role": "admin"})
    made["users"] = {"ada": {"key": ada_key["key"], "key_id": ada_key["id"]}, "bob": {"key": bob_key["key"]}}
    made["admin_keys"] = {
        "admin-ci": {"id": admin_key["id"], "key": admin_key["key"]},
        "revoked-ci": {"id": revoked["id"], "key": revoked["key"]},
    }
    made["team"] = {"name": TEAM, "members": {"ada": "admin", "bob": "viewer"}}
    made["project"] = PROJECT
    made["registry"] = {"name": REGISTRY, "members": {"ada": "admin"}}


def webhooks(api: Api, made: dict[str, Any], receiver_port: int) -> None:
    secrets = f"/api/v1/teams/{TEAM}/secrets"
    for name, value in (("SIGNING", SIGNING), ("TOKEN", TOKEN), ("DEPLOY_TOKEN", DEPLOY_TOKEN)):
        api.call("POST", secrets, {"name": name, "value": value}, 201)
    url = f"http://127.0.0.1:{receiver_port}/hook"
    hook = api.call(
        "POST",
        f"/api/v1/teams/{TEAM}/webhooks",
        {"name": "ci", "url": url, "access_token_secret": "TOKEN", "signing_secret": "SIGNING"},
        201,
    )
    made["secrets"] = {"SIGNING": SIGNING, "TOKEN": TOKEN, "DEPLOY_TOKEN": DEPLOY_TOKEN}
    made["webhook"] = {"id": hook["id"], "name": "ci", "url": url}


def automations(api: Api, made: dict[str, Any]) -> None:
    hook = made["webhook"]["id"]
    common = {"team": TEAM, "action_type": "Webhooks", "webhook_id": hook}
    deploy = (
        '{"event": "${event_type}", "version": "${artifact_version_string}", '
        '"alias": "${alias}", "deploy_token": "$DEPLOY_TOKEN"}'
    )
    project = {
        "ADD_ARTIFACT_ALIAS": {
            "alias_regex": "^production$",
            "granted_secrets": ["DEPLOY_TOKEN"],
            "payload": deploy,
        },
        "ADD_ARTIFACT_TAG": {},
        "LINK_ARTIFACT": {},
        "CREATE_ARTIFACT": {},
        "RUN_METRIC_THRESHOLD": {
            "metric_threshold": {
                "metric": "loss",
                "aggregation": "MIN",
                "window": 2,
                "comparison": "<",
                "threshold": 0.5,
            }
        },
        "RUN_METRIC_CHANGE": {
            "metric_change": {
                "metric": "accuracy",
                "aggregation": "AVERAGE",
                "window": 1,
                "change_type": "ABSOLUTE",
                "direction": "INCREASE",
                "amount": 0.1,
            }
        },
        "RUN_STATE": {"run_states": ["finished"], "run_filter": {"name_regex": "^baseline$"}},
    }
    made["automations"] = {"project": {}, "registry": {}}
    for event, extra in project.items():
        name = "on-" + event.lower().replace("_", "-")
        body = {"name": name, "event": event, "description": f"fixture: {event}", **common, **extra}
        created = api.call("POST", f"{PROJECT_PATH}/automations", body, 201)
        made["automations"]["project"][event] = {"id": created["id"], "name": name}
    registry = {"ADD_ARTIFACT_ALIAS": {"alias_regex": "^staging$"}, "ADD_ARTIFACT_TAG": {}, "LINK_ARTIFACT": {}}
    for event, extra in registry.items():
        name = "registry-" + event.lower().replace("_", "-")
        body = {"name": name, "event": event, **common, **extra}
        created = api.call("POST", f"/api/v1/registries/{REGISTRY}/automations", body, 201)
        made["automations"]["registry"][event] = {"id": created["id"], "name": name}


def artifacts(api: Api, made: dict[str, Any]) -> None:
    collection = f"{PROJECT_PATH}/artifacts/collections/{COLLECTION}"
    api.call(
        "POST",
        f"{PROJECT_PATH}/artifacts/collections",
        {"name": COLLECTION, "type": "model", "description": "fixture"},
        201,
    )
    config = b'{"layers": 2, "fixture": "upgrade"}\n'
    v0 = api.upload(
        f"{collection}/versions",
        {"type": "model", "metadata": '{"accuracy": 0.91}'},
        {"weights.bin": WEIGHTS, "config.json": config},
    )
    v1 = api.upload(f"{collection}/versions", {"type": "model"}, {"weights.bin": WEIGHTS[::-1]})
    api.call("PUT", f"{collection}/versions/v0/aliases/production")
    api.call("PUT", f"{collection}/versions/v0/tags/reviewed")
    link = api.call("POST", f"{collection}/versions/v0/links", {"registry": REGISTRY, "collection": "chat"}, 201)
    registry_version = f"/api/v1/registries/{REGISTRY}/collections/chat/versions/v0"
    api.call("PUT", f"{registry_version}/aliases/staging")
    api.call("PUT", f"{registry_version}/tags/approved")
    made["artifacts"] = {
        "collection": COLLECTION,
        "versions": {"v0": v0, "v1": v1},
        "files": {
            "weights.bin": hashlib.sha256(WEIGHTS).hexdigest(),
            "config.json": hashlib.sha256(config).hexdigest(),
        },
        "v1_weights_sha256": hashlib.sha256(WEIGHTS[::-1]).hexdigest(),
        "aliases": {"v0": ["production"], "v1": ["latest"]},
        "tags": {"v0": ["reviewed"]},
        "link": link,
        "registry": {"collection": "chat", "aliases": ["staging"], "tags": ["approved"]},
    }


def runs(api: Api, made: dict[str, Any]) -> None:
    api.call("POST", f"{PROJECT_PATH}/runs", {"name": "baseline", "config": {"lr": 0.001, "layers": 2}}, 201)
    history = [
        {"loss": 0.9, "accuracy": 0.5},
        {"loss": 0.6, "accuracy": 0.55},
        {"loss": 0.45, "accuracy": 0.7},
        {"loss": 0.3, "accuracy": 0.82},
    ]
    api.call("POST", f"{PROJECT_PATH}/runs/baseline/history", history)
    api.call("PATCH", f"{PROJECT_PATH}/runs/baseline", {"state": "finished"})
    made["run"] = {"name": "baseline", "history": history, "state": "finished"}


def weave(api: Api, made: dict[str, Any]) -> None:
    rows = [{"q": "2+2?", "a": "4"}, {"q": "capital of France?", "a": "Paris"}]
    first = api.call("POST", f"/v2/{TEAM}/{PROJECT}/datasets", {"name": "qa", "rows": rows[:1]})
    second = api.call("POST", f"/v2/{TEAM}/{PROJECT}/datasets", {"name": "qa", "rows": rows})
    chats = [
        {"messages": [{"role": "user", "content": f"{i}+1?"}, {"role": "assistant", "content": str(i + 1)}]}
        for i in range(4)
    ]
    chat_set = api.call("POST", f"/v2/{TEAM}/{PROJECT}/datasets", {"name": "chats", "rows": chats})
    project_id = f"{TEAM}/{PROJECT}"
    obj = api.call(
        "POST",
        "/obj/create",
        {"obj": {"project_id": project_id, "object_id": "prompt", "val": {"template": "Answer {q}", "version": 1}}},
    )
    start = {
        "project_id": project_id,
        "id": "call-root",
        "trace_id": "trace-1",
        "op_name": "weave:///lab/demo/op/answer:v0",
        "started_at": "2026-11-26T09:00:00Z",
        "attributes": {"fixture": "upgrade"},
        "inputs": {"q": "2+2?"},
    }
    api.call("POST", "/call/start", {"start": start})
    child = {**start, "id": "call-child", "parent_id": "call-root", "op_name": "weave:///lab/demo/op/lookup:v0"}
    api.call("POST", "/call/start", {"start": child})
    for call, output, ended in (
        ("call-child", "four", "2026-11-26T09:00:01Z"),
        ("call-root", "4", "2026-11-26T09:00:02Z"),
    ):
        end = {"project_id": project_id, "id": call, "ended_at": ended, "output": output, "summary": {}}
        api.call("POST", "/call/end", {"end": end})
    feedback = api.call(
        "POST",
        "/feedback/create",
        {
            "project_id": project_id,
            "weave_ref": f"weave:///{project_id}/call/call-root",
            "feedback_type": "note",
            "payload": {"note": "correct"},
        },
    )
    made["weave"] = {
        "datasets": {"qa": {"v0": first, "v1": second, "rows": rows}, "chats": chat_set},
        "object": {"object_id": "prompt", "digest": obj["digest"]},
        "calls": {"call-root": "4", "call-child": "four"},
        "feedback": {"id": feedback["id"], "note": "correct"},
    }


def inference(api: Api, made: dict[str, Any]) -> None:
    for model_id, upstream in (("upstream-chat", "gpt-upstream"), (WORKER_BASE, "worker-base")):
        api.call(
            "POST",
            "/api/v1/admin/models",
            {
                "id": model_id,
                "backend": "openai-compatible",
                "base_url": "http://127.0.0.1:9/v1",
                "upstream_model": upstream,
                "api_key": UPSTREAM_KEY,
            },
            201,
        )
    ada = made["users"]["ada"]["key"]
    completion = api.call(
        "POST",
        "/v1/chat/completions",
        {
            "model": "fulcrum-tiny",
            "messages": [{"role": "user", "content": "Hi"}],
            "max_tokens": 8,
            "seed": 7,
            "user": "upgrade-fixture",
        },
        key=ada,
        headers={"OpenAI-Project": f"{TEAM}/{PROJECT}"},
    )
    usage = wait_for(
        "the usage record",
        lambda: api.call("GET", f"/api/v1/usage?entity={TEAM}&project={PROJECT}&group_by=model").get("data"),
    )
    made["inference"] = {
        "catalog": ["upstream-chat", WORKER_BASE],
        "upstream_api_key": UPSTREAM_KEY,
        "completion_usage": completion["usage"],
        "usage": usage,
    }


def job_done(api: Api, job: str) -> bool:
    status = api.call("GET", f"/v1/preview/training-jobs/{job}")["status"]
    if status in ("failed", "cancelled"):
        sys.exit(f"training job {job} {status}")
    return status == "succeeded"


def training(api: Api, made: dict[str, Any]) -> None:
    tiny = api.call(
        "POST",
        "/v1/preview/models",
        {"entity": TEAM, "project": PROJECT, "name": "tiny-agent", "base_model": "fulcrum-tiny"},
        201,
    )
    chats = made["weave"]["datasets"]["chats"]["digest"]
    sft = api.call(
        "POST",
        "/v1/preview/sft-training-jobs",
        {
            "model_id": tiny["id"],
            "training_data_url": f"weave:///{TEAM}/{PROJECT}/object/chats:{chats}",
            "config": {"learning_rate": 0.003, "batch_size": 2, "epochs": 1},
        },
        202,
    )
    wait_for("the SFT job", lambda: job_done(api, sft["id"]), 300)
    trajectory = {
        "messages_and_choices": [
            {"role": "user", "content": "say hi"},
            {
                "finish_reason": "stop",
                "index": 0,
                "logprobs": {"content": []},
                "message": {"role": "assistant", "content": "hi"},
            },
        ],
        "tools": [],
        "metrics": {},
        "metadata": {},
        "logs": [],
    }
    groups = [{"trajectories": [{**trajectory, "reward": 1}, {**trajectory, "reward": 0}]}]
    rl = api.call(
        "POST",
        "/v1/preview/training-jobs",
        {"model_id": tiny["id"], "trajectory_groups": groups, "config": {"learning_rate": 0.001}},
        202,
    )
    wait_for("the RL job", lambda: job_done(api, rl["id"]), 300)
    api.call("POST", f"/v1/preview/models/{tiny['id']}/log", {"split": "val", "trajectory_groups": groups}, 204)

    gpu = api.call(
        "POST",
        "/v1/preview/models",
        {"entity": TEAM, "project": PROJECT, "name": "gpu-agent", "base_model": WORKER_BASE},
        201,
    )
    worker_job = api.call(
        "POST", "/v1/preview/training-jobs", {"model_id": gpu["id"], "trajectory_groups": groups}, 202
    )
    worker = api.call("POST", "/api/v1/workers", {"name": "fixture-worker", "base_models": [WORKER_BASE]}, 201)
    claim = api.call("POST", f"/api/v1/workers/{worker['id']}/claim?wait=30")
    if claim["job_id"] != worker_job["id"]:
        sys.exit(f"the worker claimed {claim['job_id']}, not {worker_job['id']}")
    token = claim["token"]
    prefix = f"/api/v1/workers/jobs/{worker_job['id']}"
    api.call("GET", f"{prefix}/input", key=token)
    api.call("POST", f"{prefix}/events", {"type": "training_started", "data": {"num_sequences": 1}}, key=token)
    step = {"loss": 0.25, "learning_rate": 0.0001, "grad_norm": 1.5, "reward": 0.5}
    api.call("POST", f"{prefix}/events", {"type": "gradient_step", "data": step}, key=token)
    api.call(
        "PUT",
        f"{prefix}/checkpoint?path=adapter_config.json",
        raw=ADAPTER,
        key=token,
        content_type="application/octet-stream",
    )
    api.call("POST", f"{prefix}/finish", {"metrics": step}, key=token)
    wait_for("the worker's job", lambda: job_done(api, worker_job["id"]), 60)
    made["training"] = {
        "tiny": {"id": tiny["id"], "run_id": tiny.get("run_id"), "jobs": {"sft": sft["id"], "rl": rl["id"]}},
        "gpu": {"id": gpu["id"], "job": worker_job["id"], "adapter_sha256": hashlib.sha256(ADAPTER).hexdigest()},
        "worker": {"id": worker["id"], "name": "fixture-worker"},
    }


def deliveries(api: Api, made: dict[str, Any]) -> None:
    hook = made["webhook"]["id"]

    def settled() -> Any:
        page = api.call("GET", f"/api/v1/teams/{TEAM}/webhooks/{hook}/deliveries?limit=100")
        rows = page["deliveries"]
        return rows if rows and all(row["state"] == "succeeded" for row in rows) else None

    time.sleep(2)
    rows = wait_for("every delivery", settled)
    fired = sorted({row.get("automation_id") for row in rows if row.get("automation_id") is not None})
    made["deliveries"] = {"count": len(rows), "automation_ids": fired, "received": len(Receiver.received)}


def main() -> None:
    base, key, port, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api = Api(base, key)
    made: dict[str, Any] = {"admin_key": key}
    accounts(api, made)
    webhooks(api, made, port)
    automations(api, made)
    artifacts(api, made)
    runs(api, made)
    weave(api, made)
    inference(api, made)
    training(api, made)
    deliveries(api, made)
    server.shutdown()
    with open(out, "w", encoding="utf-8") as file:
        json.dump(made, file, indent=2, sort_keys=True)
        file.write("\n")


if __name__ == "__main__":
    main()
