"""The base once plus its adapters: Fulcrum's RSS with N LoRA checkpoints of one GGUF file loaded at once.

Run by bench/gguf.sh (the step ADAPTERS=8), against a Fulcrum whose catalog serves the GGUF file as a `gguf`
model (--model, default `bench-gguf-lora`) that is also a worker base model, with a
`fulcrum-worker run --model-path FILE.gguf` polling it. Standard library only: any python3 runs it.

1. Makes N real checkpoints through the HTTP API, as a client of the training API would: registers N training
   models on the base model (`POST /v1/preview/models`), uploads a tiny SFT dataset for each (4 chats whose answer is
   "The secret word is <a word of its own>.", an artifact of type dataset), posts one SFT job each
   (`/v1/preview/sft-training-jobs`, `epochs` gradient steps of the 4 chats) and follows each job's events until
   `training_ended`. The worker trains them one after the other; each job's checkpoint is step 1 of its model.
2. Measures Fulcrum's VmRSS (/proc/<pid>/status): before any request to the base model, after requests to the base
   alone, after one request to each checkpoint (`wandb-artifact:///{entity}/{project}/{model}:step1`, each a LoRA
   adapter with a context of its own on the one llama_model of the file), and after a second round of the same N
   requests (nothing new to load: the noise of the figure). Each request is the same greedy chat ("What is the secret
   word?", at most 16 tokens), and the answers are kept: each checkpoint should name its own word.

adapters_rss() is the hook bench/gguf_bench.py once had; rows() gives the lines of its table. Prints each step and a
table; writes every number to --json.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request

import multipart_form

QUESTION = "What is the secret word?"
QUESTIONS = [QUESTION, "Tell me the secret word.", "What's the secret word?", "Which word is secret?"]
WORDS = ["Blueberry", "Pineapple", "Apricot", "Cranberry", "Mango", "Raspberry", "Tangerine", "Watermelon"]


class Refused(Exception):
    """Fulcrum answered 4xx/5xx: status and body."""

    def __init__(self, status, body):
        super().__init__(f"{status}: {body[:300]}")
        self.status = status
        self.body = body


class Client:
    """Fulcrum's HTTP API with a bearer key; `model` and `pid` as gguf_bench.py's Fulcrum has them."""

    def __init__(self, base, key, model, pid):
        self.base = base.rstrip("/")
        self.key = key
        self.model = model
        self.pid = pid

    def call(self, method, path, body=None, content_type="application/json"):
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Authorization", "Bearer " + self.key)
        if data is not None:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=900) as response:
                return json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            raise Refused(error.code, error.read().decode(errors="replace")) from None

    def post(self, path, body):
        """An inference request: the body's own `model`, else this client's."""
        return self.call("POST", path, {"model": self.model, **body})

    def upload(self, path, filename, content, fields):
        """A multipart/form-data POST of one file and plain fields."""
        body, content_type = multipart_form.encode(fields, filename, content, "application/jsonl")
        return self.call("POST", path, body, content_type)

    def rss_mib(self):
        return rss_mib(self.pid)


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def word(k):
    """The k-th checkpoint's secret word (0-based), a different one for each."""
    return WORDS[k % len(WORDS)] + ("" if k < len(WORDS) else str(k // len(WORDS)))


def dataset(secret):
    """train.jsonl: the 4 questions, each answered with the secret word."""
    lines = []
    for question in QUESTIONS:
        answer = f"The secret word is {secret}."
        messages = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
        lines.append(json.dumps({"messages": messages}))
    return ("\n".join(lines) + "\n").encode()


def make_checkpoints(api, entity, project, n, epochs, learning_rate, timeout, worker=None):
    """N training models on api.model, one SFT job each; their checkpoints (model ids of step 1) and the jobs."""
    made = []
    for k in range(n):
        name = f"adapter-{k + 1}"
        body = {"entity": entity, "project": project, "name": name, "base_model": api.model, "return_existing": True}
        model_id = api.call("POST", "/v1/preview/models", body)["id"]
        collection = f"{name}-data"
        api.upload(
            f"/api/v1/entities/{entity}/projects/{project}/artifacts/collections/{collection}/versions",
            "train.jsonl",
            dataset(word(k)),
            {"type": "dataset"},
        )
        made.append({"name": name, "model_id": model_id, "word": word(k), "data": collection})
    start = time.monotonic()
    # all jobs at once: the worker claims the next as soon as it is done with one
    for made_one in made:
        job = {
            "model_id": made_one["model_id"],
            "training_data_url": f"wandb-artifact:///{entity}/{project}/{made_one['data']}:latest",
            "config": {"learning_rate": learning_rate, "batch_size": len(QUESTIONS), "epochs": epochs},
        }
        made_one["job"] = api.call("POST", "/v1/preview/sft-training-jobs", job)["id"]
    print(f"  {n} SFT jobs posted ({epochs} steps of {len(QUESTIONS)} chats each, learning rate {learning_rate})")
    for made_one in made:
        ended = wait_for_job(api, made_one["job"], start + timeout, worker)
        if ended["type"] != "training_ended":
            raise SystemExit(f"job {made_one['job']} of {made_one['name']}: {json.dumps(ended)[:500]}")
        step = ended.get("data", {}).get("checkpoint_step", 1)
        made_one["checkpoint"] = f"wandb-artifact:///{entity}/{project}/{made_one['name']}:step{step}"
        made_one["seconds_since_posted"] = round(time.monotonic() - start, 1)
        print(f"  {made_one['checkpoint']} ({made_one['word']}) after {made_one['seconds_since_posted']:.0f} s")
    return made


def running(pid):
    """Whether the process runs (and is not a zombie its parent has yet to reap)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def wait_for_job(api, job, deadline, worker=None):
    """Follows the job's events (with `after`, as ART does) until it ended or failed; that last event. Stops when the
    worker (its pid, when given) has exited with the job still open."""
    after = None
    while True:
        alive = worker is None or running(worker)  # before the events: a worker ends a job before it exits
        query = {"limit": 100, **({"after": after} if after else {})}
        page = api.call("GET", f"/v1/preview/training-jobs/{job}/events?{urllib.parse.urlencode(query)}")
        for event in page["data"]:
            if event["type"] in ("training_ended", "training_failed"):
                return event
        if page["data"]:
            after = page["last_id"]
        if not alive:
            raise SystemExit(f"fulcrum-worker (pid {worker}) exited before job {job} ended")
        if time.monotonic() > deadline:
            raise SystemExit(f"job {job} did not end in time")
        time.sleep(2)


def ask(fulcrum, model_id):
    """The same greedy chat to a model; its answer."""
    body = {"model": model_id, "messages": [{"role": "user", "content": QUESTION}], "max_tokens": 16}
    return fulcrum.post("/v1/chat/completions", {**body, "temperature": 0})["choices"][0]["message"]["content"]


def adapters_rss(fulcrum, model_ids):
    """Fulcrum's RSS with the base alone, then after one request to each checkpoint model id, then after a second
    round of them: a dict of the readings (MiB) and answers, or None when given no ids.

    model_ids are catalog ids of checkpoints of a training model whose base model is the GGUF model fulcrum.model
    (wandb-artifact:///...:stepN, docs/inference.md "LoRA checkpoints"); all of them are loaded at once only when
    fulcrum.inference.gguf.max-contexts is above their number (one context for the base model, one per adapter)."""
    if not model_ids:
        return None
    result = {"base_model": fulcrum.model, "before_mib": fulcrum.rss_mib()}
    print(f"  before any request to {fulcrum.model}: Fulcrum's RSS {result['before_mib']:.0f} MiB")
    ask(fulcrum, fulcrum.model)  # loads the file (unless another entry did) and the base's context
    result["base_answer"] = ask(fulcrum, fulcrum.model)
    result["base_mib"] = fulcrum.rss_mib()
    print(f"  the base alone: {result['base_mib']:.0f} MiB, answers {result['base_answer']!r}")
    result["after"] = []
    for model_id in model_ids:
        answer = ask(fulcrum, model_id)
        result["after"].append({"model": model_id, "rss_mib": fulcrum.rss_mib(), "answer": answer})
        print(f"  after {model_id}: {result['after'][-1]['rss_mib']:.0f} MiB, answers {answer!r}")
    result["with_adapters_mib"] = result["after"][-1]["rss_mib"]
    for model_id in model_ids:  # all loaded already: what the RSS does without anything new
        ask(fulcrum, model_id)
    result["second_round_mib"] = fulcrum.rss_mib()
    n = len(model_ids)
    result["adapters"] = n
    result["per_adapter_mib"] = (result["with_adapters_mib"] - result["base_mib"]) / n
    result["first_base_request_mib"] = result["base_mib"] - result["before_mib"]
    print(
        f"  after a second round of the {n}: {result['second_round_mib']:.0f} MiB; the {n} adapters cost "
        f"{result['with_adapters_mib'] - result['base_mib']:.0f} MiB, {result['per_adapter_mib']:.1f} MiB each"
    )
    return result


def describe_files(result, gguf, export_dir, log):
    """Adds the GGUF file's size, the adapters' files (Fulcrum's export of each checkpoint) and what Fulcrum's log
    says it loaded: every GGUF model load and every LoRA adapter load."""
    result["file_mib"] = os.path.getsize(gguf) / 2**20
    files = (
        sorted(glob.glob(os.path.join(export_dir, "**", "adapter_model.gguf"), recursive=True)) if export_dir else []
    )
    result["adapter_files_mib"] = [os.path.getsize(f) / 2**20 for f in files]
    if log and os.path.exists(log):
        with open(log, errors="replace") as lines:
            text = lines.read()
        result["log_model_loads"] = re.findall(r"Loaded the GGUF model .*", text)
        result["log_adapter_loads"] = len(re.findall(r"Loaded the LoRA adapter ", text))
    sizes = result["adapter_files_mib"]
    print(
        f"  the GGUF file: {result['file_mib']:.1f} MiB; adapter_model.gguf: "
        + (f"{len(sizes)} files of {min(sizes):.1f} to {max(sizes):.1f} MiB" if sizes else "not found")
    )
    if "log_model_loads" in result:
        print(
            f"  Fulcrum's log: {len(result['log_model_loads'])} GGUF model load(s) "
            f"{result['log_model_loads']}, {result['log_adapter_loads']} LoRA adapter loads"
        )


def loaded_before(log, gguf):
    """Whether Fulcrum's log says it has loaded the file already (another catalog entry on it); None without a log."""
    if not log or not os.path.exists(log):
        return None
    with open(log, errors="replace") as lines:
        return any("Loaded the GGUF model " + gguf in line for line in lines)


def rows(result, skipped=None):
    """The table's lines (metric, Fulcrum, llama.cpp, ratio, target, met), as gguf_bench.py's table has them."""
    if result is None:
        text = f"not measured ({skipped})" if skipped else "not measured"
        return [("RSS of the base plus 8 LoRA checkpoints, MiB", text, None, None, "(information)", None)]
    n = result["adapters"]
    file_mib = result["file_mib"]
    per = result["per_adapter_mib"]
    first = result["first_base_request_mib"]
    adapter = max(result["adapter_files_mib"], default=float("nan"))
    copies = result["base_mib"] + n * first
    fresh = result.get("file_loaded_before") is False  # the base's first request loaded the file
    return [
        (
            f"RSS with the base alone, MiB (`{result['base_model']}`; its first request: +{first:.0f})",
            result["base_mib"],
            None,
            None,
            "(information)",
            None,
        ),
        (
            f"RSS with the base and {n} LoRA checkpoints loaded at once, MiB",
            result["with_adapters_mib"],
            None,
            None,
            f"< {n} copies: base + {n} x its first request ({copies:.0f})" if fresh else "(information)",
            result["with_adapters_mib"] < copies if fresh else None,
        ),
        (
            f"RSS per checkpoint, MiB (adapter file {adapter:.1f} + a context; the GGUF file {file_mib:.0f})",
            per,
            None,
            None,
            "(information)",
            None,
        ),
    ]


def print_rows(lines):
    out = ["| metric | Fulcrum | target | met |", "|---|---|---|---|"]
    for label, value, _, _, target, met in lines:
        cell = value if isinstance(value, str) else f"{value:.1f}"
        out.append(f"| {label} | {cell} | {target} | {'-' if met is None else ('yes' if met else 'no')} |")
    print("\n".join(out))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="Fulcrum's base URL")
    parser.add_argument("--key", required=True, help="an administrator's API key")
    parser.add_argument("--pid", type=int, required=True, help="Fulcrum's process, for its RSS")
    parser.add_argument("--gguf", required=True, help="the GGUF file of the base model")
    parser.add_argument("--model", default="bench-gguf-lora", help="the catalog's gguf model, a worker base model")
    parser.add_argument("--adapters", type=int, default=8)
    parser.add_argument("--entity", default="admin")
    parser.add_argument("--project", default="bench-adapters")
    parser.add_argument("--epochs", type=int, default=4, help="gradient steps of each SFT job")
    parser.add_argument("--learning-rate", type=float, default=5e-3)
    parser.add_argument("--timeout", type=int, default=3600, help="seconds for all the jobs")
    parser.add_argument("--export-dir", help="Fulcrum's fulcrum.inference.checkpoints.export-dir (adapters' sizes)")
    parser.add_argument("--log", help="Fulcrum's log, for what it says it loaded")
    parser.add_argument("--worker-pid", type=int, help="the fulcrum-worker process: stop waiting when it has exited")
    parser.add_argument("--context-size", type=int, help="the base model's context-size (recorded)")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()

    api = Client(args.base, args.key, args.model, args.pid)
    result = {"load_average_before": os.getloadavg()}
    print(f"making {args.adapters} checkpoints of {args.model} ({args.gguf}) with fulcrum-worker:")
    start = time.monotonic()
    made = make_checkpoints(
        api, args.entity, args.project, args.adapters, args.epochs, args.learning_rate, args.timeout, args.worker_pid
    )
    result["training_seconds"] = round(time.monotonic() - start, 1)
    result["file_loaded_before"] = loaded_before(args.log, args.gguf)
    print(f"Fulcrum's RSS with the base alone, then with {args.adapters} checkpoints (LoRA adapters) loaded:")
    result.update(adapters_rss(api, [m["checkpoint"] for m in made]))
    result["checkpoints"] = made
    result["context_size"] = args.context_size
    describe_files(result, args.gguf, args.export_dir, args.log)
    result["load_average_after"] = os.getloadavg()
    right = sum(1 for m, a in zip(made, result["after"], strict=True) if m["word"] in (a["answer"] or ""))
    result["checkpoints_naming_their_word"] = right
    print(f"  {right} of {len(made)} checkpoints name their own word")
    print()
    print_rows(rows(result))
    with open(args.json, "w") as out:
        json.dump(result, out, indent=2)
    print(f"\nwritten to {args.json}")


if __name__ == "__main__":
    main()
