"""The soak's load and its record (bench/soak.sh starts the server, the webhook receiver and fulcrum-worker, then this).

Standard library only. Sets up what each kind of load needs, then sends every kind open-loop, on a fixed schedule
(a request is due every 1/rate seconds whatever the earlier ones are doing; its latency counts from when it was due,
so a server that falls behind shows it), for the duration:

    ds_read    GET /v2/admin/soak/datasets/{object}/versions/{digest}, five 100-row datasets in turn
    ds_write   POST /v2/admin/soak/datasets, a new version (20 new rows) of one of ten datasets in turn
    chat       POST /v1/chat/completions on the built-in fulcrum-tiny, max_tokens 16
    webhook    PUT .../versions/v0/tags/{tag}: an ADD_ARTIFACT_TAG event whose automation posts to the receiver
    weave      POST /call/start then /call/end of one call (one sample: both requests)
    console    GET a console page with a session cookie, seven pages in turn
    training   one SFT job at a time through fulcrum-worker (the tiny Llama), the next posted when one ended; its
               latency is the job's time from posted to training_ended (a training_failed is an error)

Every minute it records, per kind, the count, errors, p50 and p99, and the server's RSS and threads (/proc), open file
descriptors, heap (jvm_memory_used_bytes{area="heap"} of /q/metrics every 5 s: the minute's minimum, the level after
a young collection, and its maximum), the receiver's deliveries and the load average. At the end: the tables
(markdown), the verdict and every figure as JSON; exit status 1 when the verdict fails: an error of any kind, an event
without its signed delivery, or growth after the warm-up (the medians of the first and of the last 5 minutes after it:
RSS or heap more than 10 % apart, threads up by more than 5, open fds by more than 10; the live heap, a class
histogram's total taken by `jcmd` right after a full collection, at the warm-up's end and at the end, more than 10 %
apart).

Environment: BASE, KEY, SECRET (the receiver's signing secret), RECEIVER_URL, SERVER_PID, WORKER_PID, BASE_MODEL,
DURATION (30m, 90s, ...), WARMUP_MINUTES (5), RATES (e.g. "ds_read=20,chat=0.5"), SFT_EPOCHS (20), JSON (output).
"""

from __future__ import annotations

import heapq
import http.client
import json
import math
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import multipart_form

BASE = os.environ["BASE"]
KEY = os.environ["KEY"]
ENTITY = "admin"
PROJECT = "soak"
TEAM = "soak"
HOOKS_PROJECT = "hooks"
RATES = {"ds_read": 20.0, "ds_write": 2.0, "chat": 0.5, "webhook": 1.0, "weave": 5.0, "console": 1.0}
KINDS = [*RATES, "training"]
TIMEOUT = 30
URL = urllib.parse.urlsplit(BASE)


def duration_seconds(text: str) -> float:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([smh]?)", text.strip())
    if not match:
        raise SystemExit(f"DURATION={text!r}: a number with s, m or h")
    return float(match.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[match.group(2)]


class Failure(Exception):
    """An answer that is not the expected one."""


_local = threading.local()


def request(method: str, path: str, body=None, headers=None, base=URL, expect=(200,)) -> tuple[int, bytes, dict]:
    """One request on this thread's keep-alive connection to base; fails (Failure) on another status."""
    connections = getattr(_local, "connections", None)
    if connections is None:
        connections = _local.connections = {}
    all_headers = {"Authorization": f"Bearer {KEY}"}
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        all_headers["Content-Type"] = "application/json"
    all_headers.update(headers or {})
    all_headers = {name: value for name, value in all_headers.items() if value is not None}  # None: left out
    for attempt in (1, 2):
        connection = connections.get(base.netloc)
        if connection is None:
            connection = connections[base.netloc] = http.client.HTTPConnection(
                base.hostname, base.port, timeout=TIMEOUT
            )
        try:
            connection.request(method, path, body=body, headers=all_headers)
            response = connection.getresponse()
            data = response.read()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as error:
            # a kept-alive connection the server closed while idle: once more on a new one (not a server error),
            # but only before anything was answered
            connection.close()
            del connections[base.netloc]
            if attempt == 2:
                raise Failure(f"{method} {path}: {error!r}") from error
            continue
        except Exception as error:
            connection.close()
            del connections[base.netloc]
            raise Failure(f"{method} {path}: {error!r}") from error
        if response.status not in expect:
            raise Failure(f"{method} {path}: HTTP {response.status} {data[:300]!r}")
        return response.status, data, dict(response.getheaders())
    raise AssertionError("unreachable")


def call(method: str, path: str, body=None, expect=(200,), **kwargs):
    return json.loads(request(method, path, body, expect=expect, **kwargs)[1] or b"null")


def iso(t: float | None = None) -> str:
    moment = datetime.fromtimestamp(time.time() if t is None else t, timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def rows(n: int, prefix: str) -> list[dict]:
    return [
        {"id": i, "question": f"{prefix} question {i}: what is {i} + {i}?", "answer": str(2 * i), "score": i / 7}
        for i in range(n)
    ]


CAPITALS = [
    ("France", "Paris"), ("Japan", "Tokyo"), ("Italy", "Rome"), ("Spain", "Madrid"), ("Germany", "Berlin"),
    ("Egypt", "Cairo"), ("Peru", "Lima"), ("Kenya", "Nairobi"), ("Canada", "Ottawa"), ("Norway", "Oslo"),
]  # fmt: skip


class Setup:
    """Everything the kinds need, made through the API as a client would."""

    def __init__(self):
        secret, receiver = os.environ["SECRET"], os.environ["RECEIVER_URL"]
        self.reads = []
        for i in range(5):
            made = call("POST", f"/v2/{ENTITY}/{PROJECT}/datasets", {"name": f"read-{i}", "rows": rows(100, f"r{i}")})
            self.reads.append(
                (f"read-{i}", f"/v2/{ENTITY}/{PROJECT}/datasets/{made['object_id']}/versions/{made['digest']}")
            )
        # the webhook: a team with its signing secret, a webhook to the receiver, a project with a model version, and
        # one automation on its tags
        call("POST", "/api/v1/teams", {"name": TEAM}, expect=(200, 201))
        call("POST", f"/api/v1/teams/{TEAM}/secrets", {"name": "SIGNING", "value": secret}, expect=(200, 201))
        hook = {"name": "receiver", "url": f"{receiver}/hook", "signing_secret": "SIGNING"}
        self.webhook = call("POST", f"/api/v1/teams/{TEAM}/webhooks", hook, expect=(200, 201))["id"]
        project = f"/api/v1/entities/{TEAM}/projects/{HOOKS_PROJECT}"
        call("POST", f"{project}/runs", {"name": "setup"}, expect=(200, 201))
        body, content_type = multipart_form.encode({"type": "model"}, "model.txt", b"weights\n")
        request("POST", f"{project}/artifacts/collections/model/versions", body, {"Content-Type": content_type},
                expect=(200, 201))  # fmt: skip
        self.version = f"{project}/artifacts/collections/model/versions/v0"
        automation = {
            "name": "tag", "event": "ADD_ARTIFACT_TAG", "team": TEAM, "action_type": "Webhooks",
            "webhook_id": self.webhook, "payload": '{"tag": "${tag}", "t": "${event_time}"}',
        }  # fmt: skip
        call("POST", f"{project}/automations", automation, expect=(200, 201))
        # training: a model of the worker's base model and its SFT data
        base_model = os.environ["BASE_MODEL"]
        catalog = {"id": base_model, "backend": "openai-compatible", "base_url": "http://127.0.0.1:9/v1",
                   "upstream_model": "base-model", "api_key": "none", "connect_timeout_ms": 2000}  # fmt: skip
        call("POST", "/api/v1/admin/models", catalog, expect=(201, 409))
        model = {"entity": ENTITY, "project": PROJECT, "name": "soak-sft", "base_model": base_model,
                 "return_existing": True}  # fmt: skip
        self.model = call("POST", "/v1/preview/models", model, expect=(200, 201))["id"]
        lines = "".join(
            json.dumps({"messages": [{"role": "user", "content": f"What is the capital of {country}?"},
                                     {"role": "assistant", "content": city}]}) + "\n"
            for country, city in CAPITALS
        ).encode()  # fmt: skip
        body, content_type = multipart_form.encode({"type": "dataset"}, "train.jsonl", lines)
        request("POST", f"/api/v1/entities/{ENTITY}/projects/{PROJECT}/artifacts/collections/sft-data/versions",
                body, {"Content-Type": content_type}, expect=(200, 201))  # fmt: skip
        # a console session, as the browser's sign-in form makes it
        _, _, headers = request(
            "POST", "/console/sign-in", urllib.parse.urlencode({"api_key": KEY}).encode(),
            {"Content-Type": "application/x-www-form-urlencoded", "Origin": BASE}, expect=(200, 302, 303),
        )  # fmt: skip
        cookie = next((v for k, v in headers.items() if k.lower() == "set-cookie"), "")
        if not cookie.startswith("fulcrum_console="):
            raise SystemExit(f"no console session cookie: {headers}")
        self.cookie = cookie.split(";")[0]
        p = f"/console/projects/{ENTITY}/{PROJECT}"
        self.pages = ["/console/", p, f"{p}/traces", f"{p}/runs", f"{p}/training", f"/console/teams/{TEAM}",
                      f"/console/teams/{TEAM}/webhooks/{self.webhook}"]  # fmt: skip


class Record:
    """Samples per kind and minute, and the resource readings per minute."""

    def __init__(self, start: float):
        self.start = start
        self.lock = threading.Lock()
        self.samples: dict[tuple[int, str], list[float]] = {}
        self.errors: dict[tuple[int, str], int] = {}
        self.error_texts: list[str] = []
        self.resources: dict[int, dict] = {}
        self.live: dict[str, int] = {}

    def minute(self, t: float) -> int:
        return int((t - self.start) // 60)

    def add(self, kind: str, due: float, seconds: float | None, error: str | None = None):
        with self.lock:
            key = (self.minute(due), kind)
            if error is None:
                self.samples.setdefault(key, []).append(seconds)
            else:
                self.errors[key] = self.errors.get(key, 0) + 1
                if len(self.error_texts) < 50:
                    self.error_texts.append(f"{iso()} {kind}: {error}")


def percentile(sorted_values: list[float], p: float) -> float | None:
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, math.ceil(p / 100 * len(sorted_values)) - 1)]


class Load:
    def __init__(self, setup: Setup, record: Record, rates: dict[str, float]):
        self.setup, self.record, self.rates = setup, record, rates
        self.counters = dict.fromkeys(KINDS, 0)
        self.tags_sent = 0
        self.tags_lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=48, thread_name_prefix="load")

    def next_number(self, kind: str) -> int:
        self.counters[kind] += 1  # only the scheduler thread counts
        return self.counters[kind]

    def run_one(self, kind: str, due: float, number: int):
        try:
            getattr(self, kind)(number)
            self.record.add(kind, due, time.monotonic() - due)
        except Failure as error:
            self.record.add(kind, due, None, str(error))
        except Exception as error:  # a bug of this driver is an error too, never lost
            self.record.add(kind, due, None, repr(error))

    def ds_read(self, n: int):
        name, path = self.setup.reads[n % len(self.setup.reads)]
        data = json.loads(request("GET", path)[1])
        if data.get("name") != name or not str(data.get("rows")).startswith(f"weave:///{ENTITY}/{PROJECT}/table/"):
            raise Failure(f"dataset read {path}: {json.dumps(data)[:300]}")

    def ds_write(self, n: int):
        made = call("POST", f"/v2/{ENTITY}/{PROJECT}/datasets", {"name": f"write-{n % 10}", "rows": rows(20, f"w{n}")})
        if not made.get("digest"):
            raise Failure(f"dataset write: no digest in {made}")

    def chat(self, n: int):
        body = {"model": "fulcrum-tiny", "messages": [{"role": "user", "content": f"Say hello to number {n}."}],
                "max_tokens": 16}  # fmt: skip
        answer = call("POST", "/v1/chat/completions", body)
        if not answer["choices"][0]["message"].get("content") and answer["usage"]["completion_tokens"] == 0:
            raise Failure(f"chat: an empty answer {answer}")

    def webhook(self, n: int):
        request("PUT", f"{self.setup.version}/tags/soak-{n}", expect=(200,))
        with self.tags_lock:
            self.tags_sent += 1

    def weave(self, n: int):
        project = f"{ENTITY}/{PROJECT}"
        start = {"project_id": project, "op_name": f"weave:///{project}/op/soak_op{n % 5}:abc", "started_at": iso(),
                 "attributes": {}, "inputs": {"n": n, "text": "x" * 64}}  # fmt: skip
        started = call("POST", "/call/start", {"start": start})
        end = {"project_id": project, "id": started["id"], "ended_at": iso(), "output": {"n": n, "ok": True},
               "summary": {}}  # fmt: skip
        call("POST", "/call/end", {"end": end})

    def console(self, n: int):
        page = self.setup.pages[n % len(self.setup.pages)]
        _, body, _ = request("GET", page, headers={"Cookie": self.setup.cookie, "Authorization": None})
        if b"<html" not in body[:500].lower():
            raise Failure(f"console {page}: not a page: {body[:200]!r}")

    def schedule(self, end: float):
        """Submits every kind's requests when due, until end."""
        due = [(self.record.start + 0.01 * i, kind) for i, (kind, rate) in enumerate(self.rates.items()) if rate > 0]
        heapq.heapify(due)
        while due:
            at, kind = heapq.heappop(due)
            if at >= end:
                continue
            wait = at - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self.pool.submit(self.run_one, kind, at, self.next_number(kind))
            heapq.heappush(due, (at + 1 / self.rates[kind], kind))

    def training(self, end: float, epochs: int, worker_pid: int):
        """One SFT job at a time until end, each followed through its events."""
        data = f"wandb-artifact:///{ENTITY}/{PROJECT}/sft-data:latest"
        while time.monotonic() < end:
            posted = time.monotonic()
            try:
                job = call("POST", "/v1/preview/sft-training-jobs", {
                    "model_id": self.setup.model, "training_data_url": data,
                    "config": {"learning_rate": 1e-3, "batch_size": 5, "epochs": epochs},
                }, expect=(202,))["id"]  # fmt: skip
                last = self.follow(job, posted + 600, worker_pid)
                if last["type"] != "training_ended":
                    raise Failure(f"training job {job}: {json.dumps(last)[:400]}")
                self.record.add("training", posted, time.monotonic() - posted)
                self.counters["training"] += 1
            except Failure as error:
                self.record.add("training", posted, None, str(error))
                time.sleep(5)

    def follow(self, job: str, deadline: float, worker_pid: int) -> dict:
        after = None
        while True:
            query = {"limit": 100, **({"after": after} if after else {})}
            page = call("GET", f"/v1/preview/training-jobs/{job}/events?{urllib.parse.urlencode(query)}")
            for event in page["data"]:
                if event["type"] in ("training_ended", "training_failed"):
                    return event
            if page["data"]:
                after = page["last_id"]
            if not os.path.exists(f"/proc/{worker_pid}"):
                raise Failure(f"fulcrum-worker (pid {worker_pid}) exited with job {job} open")
            if time.monotonic() > deadline:
                raise Failure(f"training job {job} did not end in 600 s")
            time.sleep(1)


def receiver_stats() -> dict:
    return call("GET", "/stats", base=urllib.parse.urlsplit(os.environ["RECEIVER_URL"]))


def heap_bytes() -> float | None:
    text = request("GET", "/q/metrics", headers={"Authorization": None})[1].decode()
    values = re.findall(r'^jvm_memory_used_bytes\{[^}]*area="heap"[^}]*\} (\S+)', text, re.M)
    return sum(float(v) for v in values) if values else None


def proc_status(pid: int) -> dict:
    status = {}
    with open(f"/proc/{pid}/status") as lines:
        for line in lines:
            name, _, value = line.partition(":")
            status[name] = value.strip()
    return {
        "rss_mib": int(status["VmRSS"].split()[0]) / 1024,
        "threads": int(status["Threads"]),
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
    }


def live_heap(pid: int) -> int:
    """The heap's live bytes: the total of a class histogram, which the JVM takes right after a full collection."""
    try:
        out = subprocess.run(["jcmd", str(pid), "GC.class_histogram"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise Failure(f"jcmd GC.class_histogram: {error!r}") from error
    total = re.search(r"^Total\s+\d+\s+(\d+)\s*$", out.stdout, re.M)
    if out.returncode != 0 or not total:
        raise Failure(f"jcmd GC.class_histogram: exit {out.returncode} {out.stdout[-300:]!r} {out.stderr[-300:]!r}")
    return int(total.group(1))


def sample(record: Record, end: float, pid: int, warmup: int):
    """Every 5 s the heap; at each minute's end the other readings (the minute's last values). The live heap (a full
    collection) when the warm-up ends and at the end: RSS falls with it when G1 gives heap back, so the minutes after
    the warm-up are all measured after one."""
    heaps: list[float] = []
    minute = 0
    while True:
        now = time.monotonic()
        if record.minute(now) != minute or now >= end:
            if record.minute(now) == warmup or now >= end:
                try:
                    live = live_heap(pid)
                    with record.lock:
                        record.live["end" if now >= end else "after_warmup"] = live
                except Failure as error:
                    record.add("metrics", now, None, str(error))
            reading = proc_status(pid)
            reading["heap_min_mib"] = min(heaps) / 2**20 if heaps else None
            reading["heap_max_mib"] = max(heaps) / 2**20 if heaps else None
            with open("/proc/loadavg") as loadavg:
                reading["load1"] = float(loadavg.read().split()[0])
            stats = receiver_stats()
            reading["delivered"] = stats["unique"]
            with record.lock:
                record.resources[minute] = reading
            heaps = []
            minute = record.minute(now)
            if now >= end:
                return
        try:
            value = heap_bytes()
            if value is not None:
                heaps.append(value)
        except Failure as error:
            record.add("metrics", now, None, str(error))
        time.sleep(min(5.0, max(0.05, record.start + (minute + 1) * 60 - time.monotonic())))


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1000:.0f}" if seconds >= 0.1 else f"{seconds * 1000:.1f}"


def report(record: Record, minutes: int, warmup: int, webhook: dict, rates: dict) -> tuple[str, bool, dict]:
    lines = []
    per_minute = []
    for m in range(minutes):
        row = {"minute": m + 1, **record.resources.get(m, {}), "kinds": {}}
        for kind in KINDS:
            values = sorted(record.samples.get((m, kind), []))
            row["kinds"][kind] = {"n": len(values), "errors": record.errors.get((m, kind), 0),
                                  "p50": percentile(values, 50), "p99": percentile(values, 99)}  # fmt: skip
        row["metrics_errors"] = record.errors.get((m, "metrics"), 0)
        per_minute.append(row)
    lines.append("| minute | load 1 min | RSS MiB | heap MiB, min (max) | threads | fds | deliveries |")
    lines.append("|---|---|---|---|---|---|---|")
    for row in per_minute:
        if "rss_mib" not in row:
            continue
        heap = "-" if row["heap_min_mib"] is None else f"{row['heap_min_mib']:.0f} ({row['heap_max_mib']:.0f})"
        lines.append(f"| {row['minute']} | {row['load1']:.1f} | {row['rss_mib']:.0f} | {heap} | {row['threads']} "
                     f"| {row['fds']} | {row['delivered']} |")  # fmt: skip
    lines.append("")
    lines.append("Per kind and minute: requests (errors): p50 / p99 in ms (training: jobs (failed): p50 / p99 in s)")
    lines.append("")
    lines.append("| minute | " + " | ".join(KINDS) + " |")
    lines.append("|---" * (len(KINDS) + 1) + "|")
    for row in per_minute:
        cells = []
        for kind in KINDS:
            k = row["kinds"][kind]
            error = f" ({k['errors']})" if k["errors"] else ""
            if kind == "training":
                cells.append(f"{k['n']}{error}: {k['p50']:.1f} / {k['p99']:.1f} s" if k["n"] else f"0{error}")
            else:
                cells.append(f"{k['n']}{error}: {fmt(k['p50'])} / {fmt(k['p99'])}")
        lines.append(f"| {row['minute']} | " + " | ".join(cells) + " |")
    totals = {}
    for kind in KINDS:
        values = sorted(v for (m, k), vs in record.samples.items() if k == kind for v in vs)
        errors = sum(e for (m, k), e in record.errors.items() if k == kind)
        totals[kind] = {"n": len(values), "errors": errors, "p50": percentile(values, 50),
                        "p99": percentile(values, 99), "max": values[-1] if values else None}  # fmt: skip
    lines.append("")
    lines.append("| whole run | requests | errors | p50 ms | p99 ms | max ms | rate asked |")
    lines.append("|---|---|---|---|---|---|---|")
    for kind, t in totals.items():
        rate = f"{rates[kind]}/s" if kind in rates else "one job at a time"
        lines.append(f"| {kind} | {t['n']} | {t['errors']} | {fmt(t['p50'])} | {fmt(t['p99'])} | {fmt(t['max'])} "
                     f"| {rate} |")  # fmt: skip

    # the verdict
    checks = []
    errors = sum(record.errors.values())
    checks.append((errors == 0, f"errors: {errors} (0 wanted)"))
    checks.append((totals["training"]["n"] > 0, f"training jobs ended: {totals['training']['n']} (1 or more wanted)"))
    ok_hooks = webhook["unique"] == webhook["sent"] and webhook["signature_failures"] == 0
    checks.append(
        (
            ok_hooks,
            f"webhook deliveries with a valid signature: {webhook['unique']} of {webhook['sent']} "
            f"events, {webhook['signature_failures']} bad signatures, {webhook['duplicates']} "
            f"duplicates, event-to-receipt p50 {webhook['p50_ms']} ms, p99 {webhook['p99_ms']} ms",
        )
    )
    # stability: the median of the first minutes after the warm-up against that of the last ones (5 each, fewer in a
    # short run), as single minutes are noisy: the heap's minimum is that of 12 readings of a sawing heap, and
    # thread pools grow and shrink with the moment's requests
    after = [row for row in per_minute[warmup:] if "rss_mib" in row and row["heap_min_mib"] is not None]
    if len(after) >= 2:
        w = max(1, min(5, len(after) // 3))
        early, late = after[:w], after[-w:]
        span = f"minutes {early[0]['minute']}-{early[-1]['minute']} against {late[0]['minute']}-{late[-1]['minute']}"
        for name, key in (("RSS", "rss_mib"), ("heap (each minute's minimum)", "heap_min_mib")):
            before, now = statistics.median(r[key] for r in early), statistics.median(r[key] for r in late)
            values = [r[key] for r in after]
            text = (
                f"{name}, medians of {span}: {before:.0f} -> {now:.0f} MiB ({now / before - 1:+.1%}; within 10 % "
                f"wanted); {min(values):.0f} to {max(values):.0f} MiB after the warm-up"
            )
            checks.append((abs(now / before - 1) <= 0.10, text))
        for name, key, slack in (("threads", "threads", 5), ("open fds", "fds", 10)):
            before, now = statistics.median(r[key] for r in early), statistics.median(r[key] for r in late)
            values = [r[key] for r in after]
            text = (
                f"{name}, medians of {span}: {before:.0f} -> {now:.0f} (at most +{slack} wanted); {min(values)} to "
                f"{max(values)} after the warm-up, {after[-1][key]} in the last minute"
            )
            checks.append((now <= before + slack, text))
        if "after_warmup" in record.live and "end" in record.live:
            before, now = record.live["after_warmup"], record.live["end"]
            text = (
                f"live heap (a class histogram's total, right after a full collection) at the end of minute {warmup} "
                f"and at the end: {before / 2**20:.1f} -> {now / 2**20:.1f} MiB ({now / before - 1:+.1%}; within 10 % "
                f"wanted)"
            )
            checks.append((abs(now / before - 1) <= 0.10, text))
        else:
            checks.append((False, f"live heap: not measured at both ends ({record.live})"))
    else:
        checks.append((False, f"too short for the stability checks: {len(after)} minutes after a warm-up of {warmup}"))
    passed = all(ok for ok, _ in checks)
    lines.append("")
    lines.append(f"Verdict: {'PASS' if passed else 'FAIL'}")
    for ok, text in checks:
        lines.append(f"- {'ok' if ok else 'FAILED'}: {text}")
    if record.error_texts:
        lines.append("")
        lines.append("First errors:")
        lines.extend(f"    {text}" for text in record.error_texts[:20])
    return "\n".join(lines), passed, {"per_minute": per_minute, "totals": totals, "checks": checks}


def main():
    duration = duration_seconds(os.environ.get("DURATION", "30m"))
    warmup = int(os.environ.get("WARMUP_MINUTES", "5"))
    rates = dict(RATES)
    for item in filter(None, os.environ.get("RATES", "").split(",")):
        kind, _, rate = item.partition("=")
        if kind not in rates:
            raise SystemExit(f"RATES: unknown kind {kind} (one of {', '.join(rates)})")
        rates[kind] = float(rate)
    server, worker = int(os.environ["SERVER_PID"]), int(os.environ["WORKER_PID"])
    setup = Setup()
    print(f"set up; {duration:.0f} s of load at {rates} and one SFT job at a time", flush=True)

    record = Record(time.monotonic())
    end = record.start + duration
    load = Load(setup, record, rates)
    threads = [
        threading.Thread(target=load.schedule, args=(end,), daemon=True),
        threading.Thread(target=load.training, args=(end, int(os.environ.get("SFT_EPOCHS", "20")), worker),
                         daemon=True),
        threading.Thread(target=sample, args=(record, end, server, warmup), daemon=True),
    ]  # fmt: skip
    for thread in threads:
        thread.start()
    minutes = math.ceil(duration / 60)
    shown = 0
    while any(thread.is_alive() for thread in threads):
        time.sleep(1)
        with record.lock:
            done = [m for m in record.resources if m >= shown]
        for m in sorted(done):
            r = record.resources[m]
            counts = " ".join(f"{k}={len(record.samples.get((m, k), []))}/{record.errors.get((m, k), 0)}"
                              for k in KINDS)  # fmt: skip
            print(
                f"minute {m + 1}: load {r['load1']:.1f} RSS {r['rss_mib']:.0f} MiB heap min "
                f"{r['heap_min_mib'] or 0:.0f} MiB threads {r['threads']} fds {r['fds']} {counts}",
                flush=True,
            )
            shown = m + 1
    load.pool.shutdown(wait=True)

    # every event's delivery: wait until the receiver has them all (or nothing changed for 30 s)
    deadline, last, same = time.monotonic() + 120, None, 0
    while time.monotonic() < deadline:
        stats = receiver_stats()
        if stats["unique"] >= load.tags_sent:
            break
        same = same + 1 if stats["unique"] == last else 0
        last = stats["unique"]
        if same >= 60:
            break
        time.sleep(0.5)
    stats = receiver_stats()
    webhook = {"sent": load.tags_sent, "unique": stats["unique"], "duplicates": stats["duplicates"],
               "signature_failures": stats["signature_failures"], "p50_ms": stats["latency_ms"]["p50"],
               "p99_ms": stats["latency_ms"]["p99"]}  # fmt: skip
    if not os.path.exists(f"/proc/{worker}"):
        record.add("training", time.monotonic(), None, "fulcrum-worker is not running at the end")
    text, passed, figures = report(record, minutes, warmup, webhook, rates)
    print()
    print(text)
    if os.environ.get("JSON"):
        figures.update(rates=rates, duration_s=duration, warmup_minutes=warmup, webhook=webhook,
                       live_heap_bytes=record.live, errors=record.error_texts)  # fmt: skip
        with open(os.environ["JSON"], "w") as out:
            json.dump(figures, out, indent=1)
        with open(os.environ["JSON"].removesuffix(".json") + ".md", "w") as out:
            out.write(text + "\n")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
