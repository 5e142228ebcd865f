"""The protocol client against a local HTTP server that records what it was sent."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from fulcrum_worker import protocol

CLAIM = {
    "job_id": "job_1",
    "kind": "sft",
    "attempt": 2,
    "token": "jwt",
    "lease_seconds": 30,
    "model": {"id": "model_1"},
    "base_checkpoint": {"step": 3, "files": [{"path": "adapter_config.json", "size": 2, "digest": "ab"}]},
}


class Recorder(BaseHTTPRequestHandler):
    requests: list = []
    answers: dict = {}

    def _answer(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        Recorder.requests.append((self.command, self.path, dict(self.headers), body))
        status, payload = Recorder.answers.get((self.command, self.path.split("?")[0]), (200, {}))
        self.send_response(status)
        content = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_header("Content-Length", str(len(content) if status != 204 else 0))
        self.end_headers()
        if status != 204:
            self.wfile.write(content)

    do_GET = do_POST = do_PUT = _answer

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    Recorder.requests, Recorder.answers = [], {}
    httpd = HTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


def test_register_and_claim_use_the_api_key(server):
    Recorder.answers[("POST", "/api/v1/workers")] = (201, {"id": "worker-a", "lease_seconds": 30})
    Recorder.answers[("POST", "/api/v1/workers/worker-a/claim")] = (200, CLAIM)
    client = protocol.Server(server, "fk_admin")
    assert client.register("a", ["base"])["id"] == "worker-a"
    claim = client.claim("worker-a", wait=1)
    assert (claim.job_id, claim.attempt, claim.base_step) == ("job_1", 2, 3)
    assert claim.base_files == [protocol.FileRef("adapter_config.json", 2, "ab")]
    method, path, headers, body = Recorder.requests[1]
    assert path == "/api/v1/workers/worker-a/claim?wait=1"
    assert headers["Authorization"] == "Bearer fk_admin"
    assert json.loads(Recorder.requests[0][3]) == {"name": "a", "base_models": ["base"]}


def test_no_job_within_the_wait_is_none(server):
    Recorder.answers[("POST", "/api/v1/workers/w/claim")] = (204, b"")
    assert protocol.Server(server, "k").claim("w", wait=0) is None


def test_job_calls_use_the_job_token_and_the_right_media_types(server):
    Recorder.answers[("POST", "/api/v1/workers/jobs/job_1/events")] = (200, {"cancel_requested": True})
    Recorder.answers[("PUT", "/api/v1/workers/jobs/job_1/checkpoint")] = (200, {"path": "a", "size": 3, "digest": "d"})
    job = protocol.Server(server, "k").job(protocol.Claim("job_1", "sft", 1, "jwt", 30, {}, 0, []))
    assert job.event("gradient_step", {"loss": 1.5}) is True
    assert job.cancel_requested
    job.upload("adapter_model.safetensors", b"abc")
    _, path, headers, body = Recorder.requests[0]
    assert headers["Authorization"] == "Bearer jwt" and headers["Content-Type"] == "application/json"
    assert json.loads(body) == {"type": "gradient_step", "data": {"loss": 1.5}}
    _, path, headers, body = Recorder.requests[1]
    assert path == "/api/v1/workers/jobs/job_1/checkpoint?path=adapter_model.safetensors"
    assert headers["Content-Type"] == "application/octet-stream" and headers["Authorization"] == "Bearer jwt"
    assert body == b"abc"


def test_409_means_the_lease_was_lost(server):
    Recorder.answers[("POST", "/api/v1/workers/jobs/job_1/heartbeat")] = (409, {"title": "lease lost"})
    Recorder.answers[("POST", "/api/v1/workers/jobs/job_1/finish")] = (422, {"title": "no files"})
    job = protocol.Server(server, "k").job(protocol.Claim("job_1", "sft", 1, "jwt", 30, {}, 0, []))
    with pytest.raises(protocol.LeaseLost):
        job.heartbeat()
    with pytest.raises(protocol.ProtocolError, match="422"):
        job.finish({})


def test_a_call_refused_for_full_storage_is_tried_again_until_it_is_stored(server):
    # the server's storage is full for two tries (nothing was stored, the same request succeeds later)
    path = ("PUT", "/api/v1/workers/jobs/job_1/checkpoint")
    tries = []

    def answer():
        tries.append(1)
        return (507, {"title": "Insufficient Storage"}) if len(tries) <= 2 else (200, {"path": "a", "digest": "d"})

    Recorder.answers = _Calls({path: answer})
    claim = protocol.Claim("job_1", "sft", 1, "jwt", 30, {}, 0, [])
    job = protocol.Job(protocol.Server(server, "k"), claim, storage_full_retries=(0.01, 0.01, 0.01))
    assert job.upload("adapter_model.safetensors", b"abc") == {"path": "a", "digest": "d"}
    assert [r[3] for r in Recorder.requests] == [b"abc"] * 3


def test_storage_full_after_every_try_is_the_servers_refusal(server):
    Recorder.answers[("POST", "/api/v1/workers/jobs/job_1/finish")] = (507, {"title": "Insufficient Storage"})
    claim = protocol.Claim("job_1", "sft", 1, "jwt", 30, {}, 0, [])
    job = protocol.Job(protocol.Server(server, "k"), claim, storage_full_retries=(0.01, 0.01))
    with pytest.raises(protocol.ProtocolError, match="507"):
        job.finish({})
    assert len(Recorder.requests) == 3


class _Calls(dict):
    """Answers computed at each request."""

    def get(self, key, default=None):
        answer = super().get(key)
        return answer() if answer else default
