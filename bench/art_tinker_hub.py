"""A stand-in for the Hugging Face Hub that serves one repository's files (bench/art-tinker-native.sh).

ART's TinkerNativeBackend loads its tokenizer by the base model's name through tinker-cookbook's
`tokenizer_utils.get_tokenizer`, which is `transformers.AutoTokenizer.from_pretrained(name)`: the real
`huggingface_hub` client, pointed here by HF_ENDPOINT, asks this server for the repository's files. Every request is
logged (one JSON line each), so the proof shows exactly what the Hub is asked for.

  files GGUF DIR            the tokenizer and config of a GGUF (transformers' own GGUF reading, then
                            save_pretrained), written to DIR: run with an interpreter that has transformers, gguf
                            and torch (the worker's venv)
  serve DIR REPO PORT LOG   answers the Hub's file and metadata requests for repository REPO from DIR (stdlib only)
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit


def write_files(gguf: str, out: str) -> None:
    from transformers import AutoConfig, AutoTokenizer

    directory, name = os.path.split(os.path.abspath(gguf))
    AutoTokenizer.from_pretrained(directory, gguf_file=name).save_pretrained(out)
    AutoConfig.from_pretrained(directory, gguf_file=name).save_pretrained(out)
    # save_pretrained notes where the tokenizer was read from; a Hub repository's config has no such keys
    path = Path(out, "tokenizer_config.json")
    config = json.loads(path.read_text())
    for key in ("is_local", "local_files_only"):
        config.pop(key, None)
    path.write_text(json.dumps(config, indent=2) + "\n")
    print(sorted(p.name for p in Path(out).iterdir()))


def serve(directory: str, repo: str, port: int, log: str) -> None:
    files = {p.relative_to(directory).as_posix(): p.read_bytes() for p in Path(directory).rglob("*") if p.is_file()}
    # one commit for the repository: a hash of its files
    digest = hashlib.sha1()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name])
    commit = digest.hexdigest()
    lock = threading.Lock()

    class Hub(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args) -> None:  # noqa: A002 (the base class's name)
            pass

        def record(self, status: int) -> None:
            with lock, open(log, "a") as out:
                out.write(json.dumps({"method": self.command, "path": self.path, "status": status}) + "\n")

        def answer(self, status: int, body: bytes, headers: dict[str, str], send_body: bool) -> None:
            self.record(status)
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if send_body:
                self.wfile.write(body)

        def missing(self, code: str, message: str, send_body: bool) -> None:
            body = json.dumps({"error": message}).encode()
            headers = {"Content-Type": "application/json", "X-Error-Code": code, "X-Error-Message": message}
            self.answer(404, body, headers, send_body)

        def json(self, value, send_body: bool) -> None:
            self.answer(200, json.dumps(value).encode(), {"Content-Type": "application/json"}, send_body)

        def route(self, send_body: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            if path.startswith(f"/{repo}/resolve/"):
                # /{repo}/resolve/{revision}/{file}
                _, file = path[len(f"/{repo}/resolve/") :].split("/", 1)
                if file not in files:
                    self.missing("EntryNotFound", f"{file} does not exist in {repo}", send_body)
                    return
                content = files[file]
                etag = '"' + hashlib.sha256(content).hexdigest() + '"'
                headers = {"Content-Type": "application/octet-stream", "ETag": etag, "X-Repo-Commit": commit}
                self.answer(200, content, headers, send_body)
            elif path in (f"/api/models/{repo}", f"/api/models/{repo}/revision/main") or path.startswith(
                f"/api/models/{repo}/revision/"
            ):
                siblings = [{"rfilename": name} for name in sorted(files)]
                self.json(
                    {"id": repo, "modelId": repo, "sha": commit, "private": False, "siblings": siblings}, send_body
                )
            elif path.startswith(f"/api/models/{repo}/tree/"):
                # /api/models/{repo}/tree/{revision}[/{folder}]
                rest = path[len(f"/api/models/{repo}/tree/") :].split("/", 1)
                folder = rest[1].strip("/") if len(rest) > 1 else ""
                prefix = folder + "/" if folder else ""
                entries = [
                    {"type": "file", "path": name, "size": len(content), "oid": hashlib.sha1(content).hexdigest()}
                    for name, content in sorted(files.items())
                    if name.startswith(prefix) and "/" not in name[len(prefix) :]
                ]
                if folder and not entries:
                    self.missing("EntryNotFound", f"{folder} does not exist in {repo}", send_body)
                    return
                self.json(entries, send_body)
            elif path.startswith("/api/models/") or path.count("/resolve/"):
                self.missing("RepoNotFound", "Repository not found", send_body)
            else:
                self.missing("NotFound", f"not served here: {path}", send_body)

        def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
            self.route(False)

        def do_GET(self) -> None:  # noqa: N802
            self.route(True)

    server = ThreadingHTTPServer(("127.0.0.1", port), Hub)
    print(f"serving {repo} ({len(files)} files, commit {commit}) on port {port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "files":
        write_files(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "serve":
        serve(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        sys.exit(__doc__)
