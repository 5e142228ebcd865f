"""Fulcrum's GGUF engine beside llama.cpp itself (llama-cpp-python), on the same file with the same threads.

Run by bench/gguf.sh, which starts Fulcrum (the file served as `bench-gguf`) and runs this in a venv that has
llama-cpp-python. Each figure is measured on both sides in alternated runs (Fulcrum then llama.cpp, then the other way
round), after one untimed warm-up on each side, and the median of the runs is kept. Fulcrum is measured through its
OpenAI API (a new HTTP connection per request, as a client would); llama.cpp through the Python API in this process.
Generation bans the end-of-generation tokens on both sides (Fulcrum: logit_bias -100; llama.cpp: its logit-bias
sampler, see NativeBiasLlama), so that both generate exactly max_tokens tokens.
With --second-model, the generation figures are measured again after one request to that model (another GGUF file
in the same Fulcrum process): a model used once must not slow the other (issue 56 §3). It comes right after the
one-model figures, before the steps that leave other sequences' caches behind (4 at once, the long prompt).
With --llama-server, streamed chat over HTTP against llama-cpp-python's own OpenAI server (llama_cpp.server) too.
Prints each run, then a table; writes every number to the JSON file given.
"""

import argparse
import http.client
import json
import os
import statistics
import sys
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import llama_cpp
import llama_cpp._internals as llama_internals
from gguf_adapters import Refused, rss_mib
from gguf_adapters import rows as adapter_rows
from gguf_batched import batched_rate
from llama_cpp import Llama

GEN_PROMPT = "Once upon a time, in a small village by the sea,"
CHAT_MESSAGE = "Tell me a long story about the sea."
LOGPROBS_PROMPT = "The capital of France is"
# about 23 tokens a line (SmolLM2's tokenizer): 17 lines and the document's number are about 400 tokens
LONG_TEXT = "\n".join(
    f"Line {k}: the tide came in over the old harbour wall and the fishing boats rose with it." for k in range(17)
)
# an OpenAI logit_bias of -100 bans a token; llama-cpp-python adds its bias to the logit, so -inf bans it there
FULCRUM_BAN = -100


class Fulcrum:
    """Fulcrum's OpenAI API, one new connection per request."""

    def __init__(self, base, key, model, pid):
        url = urllib.parse.urlparse(base)
        self.host, self.port = url.hostname, url.port
        self.headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
        self.model = model
        self.pid = pid
        self.bias = None  # the logit_bias sent, None once Fulcrum has refused it
        self.bias_refused = False

    def _send(self, path, body):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=900)
        connection.request("POST", path, json.dumps({"model": self.model, **body}), self.headers)
        response = connection.getresponse()
        if response.status >= 400:
            raise Refused(response.status, response.read().decode(errors="replace"))
        return response

    def post(self, path, body):
        return json.loads(self._send(path, body).read())

    def stream(self, path, body):
        """Streams the request; the times of the first and last chunk carrying text, their count, the usage."""
        body = {**body, "stream": True, "stream_options": {"include_usage": True}}
        start = time.perf_counter()
        response = self._send(path, body)
        lines = (raw.decode().strip() for raw in response)
        read = read_stream(json.loads(line[6:]) for line in lines if line.startswith("data: {"))
        end = time.perf_counter()
        tokens = read.usage["completion_tokens"] if read.usage else read.pieces
        return Run(start, read.first, read.last, end, tokens, read.pieces, read.finish, read.text)

    def with_bias(self, body):
        """The body with the end-of-generation tokens banned, while Fulcrum accepts logit_bias."""
        return {**body, "logit_bias": self.bias} if self.bias else body

    def biased(self, call, path, body):
        """call(path, body with the ban); once Fulcrum refuses logit_bias (400), without it from then on."""
        try:
            return call(path, self.with_bias(body))
        except Refused as refused:
            if refused.status != 400 or "logit_bias" not in refused.body or not self.bias:
                raise
            self.bias = None
            self.bias_refused = True
            print(
                f"  Fulcrum refuses logit_bias ({refused}): sent without it from now on, its answers end at the "
                "model's end token when that comes first, and are counted as they come (the usage)"
            )
            return call(path, body)

    def rss_mib(self):
        return rss_mib(self.pid)

    def switches(self):
        """Voluntary context switches of Fulcrum's threads so far: a thread sleeping (a futex wait at one of llama.cpp's
        OpenMP barriers, a queue) counts one, whatever the machine's load; spinning counts none."""
        total = 0
        for task in os.listdir(f"/proc/{self.pid}/task"):
            try:
                with open(f"/proc/{self.pid}/task/{task}/status") as status:
                    total += next(int(line.split()[1]) for line in status if line.startswith("voluntary_ctxt_switches"))
            except (FileNotFoundError, ProcessLookupError):
                pass  # the thread ended
        return total


class Run:
    """One streamed generation: perf_counter times of the request, its first and last text, its end."""

    def __init__(self, start, first, last, end, tokens, pieces, finish, text):
        self.start, self.first, self.last, self.end = start, first, last, end
        self.tokens, self.pieces, self.finish, self.text = tokens, pieces, finish, text

    def decode_rate(self):
        """Tokens per second after the first: (tokens - 1) over the time from the first text to the last."""
        if self.tokens < 2 or self.last is None or self.last <= self.first:
            return float("nan")
        return (self.tokens - 1) / (self.last - self.first)

    def overall_rate(self):
        return self.tokens / (self.end - self.start)

    def ttft_ms(self):
        return (self.first - self.start) * 1000 if self.first else float("nan")

    def describe(self):
        return (
            f"{self.tokens} tokens ({self.pieces} pieces, {self.finish}), first after {self.ttft_ms():.0f} ms, "
            f"{self.decode_rate():.1f} tokens/s after it, {self.overall_rate():.1f} over the request"
        )


class NativeBiasLlama(Llama):
    """A Llama whose greedy sampler bans tokens with llama.cpp's own logit-bias sampler.

    llama-cpp-python 0.3.36 applies a request's logit_bias in Python: a custom sampler that calls back into Python for
    every token and copies the vocabulary's logits through numpy twice. Measured here (SmolLM2, 2 threads, 6 runs of
    64 tokens alternated) that cost 12 % of its generation speed (26.5 against 30.1 tokens/s), a handicap of the
    reference that the ban alone brings. With native_bias set, a greedy request (temperature 0, no grammar) gets a
    chain of llama.cpp's logit-bias sampler then its greedy one instead (the penalties sampler llama-cpp-python
    would add is a no-op at its defaults, so it is left out); anything else is sampled as llama-cpp-python does."""

    native_bias = None

    def _init_sampler(self, temp=0.8, logits_processor=None, grammar=None, **others):
        if self.native_bias is None or temp != 0.0 or grammar is not None or logits_processor is not None:
            return super()._init_sampler(temp=temp, logits_processor=logits_processor, grammar=grammar, **others)
        sampler = llama_internals.LlamaSampler()
        sampler.add_logit_bias(self._n_vocab, self.native_bias)
        sampler.add_greedy()
        return sampler


class LlamaSide:
    """llama-cpp-python on the same file: n_threads and n_threads_batch, n_ctx and n_batch as Fulcrum's.

    Its generation requests forget the tokens evaluated before (Llama.reset): llama-cpp-python would otherwise reuse
    the longest prefix the last request shares, every token of the same prompt but the last, while Fulcrum evaluates a
    greedy request's prompt whole (reproducible logits: docs/inference.md, Batching). On the chat's 39 prompt tokens
    that reuse alone was 0.2 s of a 1.5 s request here."""

    def __init__(self, args):
        self.llm = NativeBiasLlama(args.gguf, **llama_settings(args))
        vocab = self.llm._model.vocab
        # llama-cpp-python stops at any end-of-generation token (llama_vocab_is_eog), and has no ignore_eos: the
        # only way to make it generate exactly max_tokens is to ban them all, with logit_bias
        self.eog = [t for t in range(self.llm.n_vocab()) if llama_cpp.llama_vocab_is_eog(vocab, t)]
        self.bias = {t: float("-inf") for t in self.eog}
        self.python_bias = args.python_logit_bias

    def stream(self, kind, prompt, max_tokens):
        common = dict(max_tokens=max_tokens, temperature=0, stream=True)
        if self.python_bias:
            common["logit_bias"] = self.bias
            self.llm.native_bias = None
        else:
            self.llm.native_bias = self.bias
        self.llm.reset()  # the whole prompt evaluated, as Fulcrum does for a greedy request (see LlamaSide)
        start = time.perf_counter()
        if kind == "chat":
            chunks = self.llm.create_chat_completion([{"role": "user", "content": prompt}], **common)
        else:
            chunks = self.llm.create_completion(prompt, **common)
        read = read_stream(chunks)  # a generator: nothing is evaluated before the first next()
        end = time.perf_counter()
        self.llm.native_bias = None
        # streamed, llama-cpp-python reports no usage: a stream cut by the limit has max_tokens tokens; a piece is a
        # token unless a character's bytes span several
        tokens = max_tokens if read.finish == "length" else read.pieces
        return Run(start, read.first, read.last, end, tokens, read.pieces, read.finish, read.text)

    def chat(self, prompt, max_tokens):
        """A whole (not streamed) greedy chat completion with the end tokens banned; its completion tokens."""
        common = dict(max_tokens=max_tokens, temperature=0)
        if self.python_bias:
            common["logit_bias"] = self.bias
            self.llm.native_bias = None
        else:
            self.llm.native_bias = self.bias
        self.llm.reset()
        out = self.llm.create_chat_completion([{"role": "user", "content": prompt}], **common)
        self.llm.native_bias = None
        return out["usage"]["completion_tokens"]

    def complete(self, prompt, max_tokens):
        start = time.perf_counter()
        out = self.llm.create_completion(prompt, max_tokens=max_tokens, temperature=0)
        return out, time.perf_counter() - start


def llama_settings(args):
    """llama-cpp-python's Llama as Fulcrum's context: threads, context and batch (n_batch = n_ubatch = --batch)."""
    return dict(
        n_threads=args.threads,
        n_threads_batch=args.threads,
        n_ctx=args.context_size,
        n_batch=args.batch,
        n_ubatch=args.batch,
        flash_attn=False,  # llama.cpp b4916, Fulcrum's, has it off by default
        verbose=False,
    )


class Stream:
    """What a stream of OpenAI chunks carried: the times of the first and last chunk with text, their count, the text,
    the finish reason and the usage (when it came)."""

    def __init__(self):
        self.first = self.last = self.usage = self.finish = None
        self.pieces = 0
        self.text = ""


def read_stream(chunks):
    """Reads chat or text-completion chunks (dicts) as they come."""
    read = Stream()
    texts = []
    for chunk in chunks:
        read.usage = chunk.get("usage") or read.usage
        for choice in chunk.get("choices") or []:
            text = choice.get("text") if "text" in choice else (choice.get("delta") or {}).get("content")
            if text:
                read.last = time.perf_counter()
                read.first = read.first or read.last
                read.pieces += 1
                texts.append(text)
            read.finish = choice.get("finish_reason") or read.finish
    read.text = "".join(texts)
    return read


def median(values):
    values = [v for v in values if v == v]  # without NaN
    return statistics.median(values) if values else float("nan")


def alternate(runs, fulcrum, llama, label):
    """runs rounds of fulcrum(i) and llama(i), the order flipped every round; their values and medians."""
    results = {"fulcrum": [], "llama.cpp": []}
    for i in range(1, runs + 1):
        sides = [("fulcrum", fulcrum), ("llama.cpp", llama)]
        for name, side in sides if i % 2 else reversed(sides):
            value, detail = side(i)
            results[name].append(value)
            print(f"  {label} run {i}, {name}: {detail}")
    return {
        "fulcrum": results["fulcrum"],
        "llama.cpp": results["llama.cpp"],
        "fulcrum_median": median(results["fulcrum"]),
        "llama.cpp_median": median(results["llama.cpp"]),
    }


def generation(args, fulcrum, llama, kind):
    """Greedy, streamed, max_tokens tokens (end tokens banned): tokens per second after the first token."""
    path = "/v1/chat/completions" if kind == "chat" else "/v1/completions"

    def body():
        if kind == "chat":
            return {"messages": [{"role": "user", "content": CHAT_MESSAGE}], "max_tokens": args.max_tokens}
        return {"prompt": GEN_PROMPT, "max_tokens": args.max_tokens}

    prompt = CHAT_MESSAGE if kind == "chat" else GEN_PROMPT
    counted = {"fulcrum": [], "llama.cpp": []}
    overall = {"fulcrum": [], "llama.cpp": []}  # tokens over the whole request's time
    texts = {}
    switches = []  # Fulcrum's voluntary context switches per token

    def on_fulcrum(i):
        before = fulcrum.switches()
        run = fulcrum.biased(fulcrum.stream, path, {**body(), "temperature": 0})
        if i:  # not the warm-up
            counted["fulcrum"].append(run.tokens)
            overall["fulcrum"].append(run.overall_rate())
            switches.append((fulcrum.switches() - before) / max(run.tokens, 1))
        texts["fulcrum"] = run.text
        per_token = (fulcrum.switches() - before) / max(run.tokens, 1)
        return run.decode_rate(), f"{run.describe()}, {per_token:.1f} context switches a token"

    def on_llama(i):
        run = llama.stream(kind, prompt, args.max_tokens)
        if i:
            counted["llama.cpp"].append(run.tokens)
            overall["llama.cpp"].append(run.overall_rate())
        texts["llama.cpp"] = run.text
        return run.decode_rate(), run.describe()

    on_fulcrum(0)
    on_llama(0)
    result = alternate(args.runs, on_fulcrum, on_llama, f"generation ({path})")
    result["tokens"] = counted
    result["tokens_per_second_over_the_request"] = overall
    result["fulcrum_switches_per_token"] = switches
    result["fulcrum_switches_per_token_median"] = median(switches)
    result["texts"] = texts
    # the prompt each side evaluated (the chat template's rendering may differ), from one more request of one token
    one = {**body(), "max_tokens": 1, "temperature": 0}
    if kind == "chat":
        mine = llama.llm.create_chat_completion([{"role": "user", "content": prompt}], max_tokens=1, temperature=0)
    else:
        mine = llama.llm.create_completion(prompt, max_tokens=1, temperature=0)
    result["prompt_tokens"] = {
        "fulcrum": fulcrum.post(path, one)["usage"]["prompt_tokens"],
        "llama.cpp": mine["usage"]["prompt_tokens"],
    }
    print(
        f"  prompt tokens: Fulcrum {result['prompt_tokens']['fulcrum']}, "
        f"llama.cpp {result['prompt_tokens']['llama.cpp']}"
    )
    a, b = texts["fulcrum"], texts["llama.cpp"]
    same = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    result["same_greedy_text"] = a == b
    print(
        "  the greedy answers: "
        + ("the same text" if a == b else f"the same for {same} characters, then differ ({len(a)} and {len(b)} long)")
    )
    result["fulcrum_logit_bias_refused"] = fulcrum.bias_refused
    return result


def chat_whole(args, fulcrum, llama):
    """Greedy chat, not streamed, max_tokens tokens (end tokens banned): completion tokens over the request's time."""
    body = {"messages": [{"role": "user", "content": CHAT_MESSAGE}], "max_tokens": args.max_tokens, "temperature": 0}
    switches = []

    def on_fulcrum(i):
        before = fulcrum.switches()
        start = time.perf_counter()
        out = fulcrum.biased(fulcrum.post, "/v1/chat/completions", body)
        seconds = time.perf_counter() - start
        tokens = out["usage"]["completion_tokens"]
        per_token = (fulcrum.switches() - before) / max(tokens, 1)
        if i:
            switches.append(per_token)
        return tokens / seconds, f"{tokens} tokens in {seconds * 1000:.0f} ms, {per_token:.1f} context switches a token"

    def on_llama(i):
        start = time.perf_counter()
        tokens = llama.chat(CHAT_MESSAGE, args.max_tokens)
        seconds = time.perf_counter() - start
        return tokens / seconds, f"{tokens} tokens in {seconds * 1000:.0f} ms"

    on_fulcrum(0)
    on_llama(0)
    result = alternate(args.runs, on_fulcrum, on_llama, "chat, not streamed")
    result["fulcrum_switches_per_token"] = switches
    result["fulcrum_switches_per_token_median"] = median(switches)
    return result


def speed(args, fulcrum, llama):
    """The generation figures: streamed /v1/completions and /v1/chat/completions, and chat not streamed."""
    results = {}
    print(f"generation, {args.max_tokens} tokens, /v1/completions (raw prompt):")
    results["gen_completions"] = generation(args, fulcrum, llama, "completion")
    print(f"generation, {args.max_tokens} tokens, /v1/chat/completions:")
    results["gen_chat"] = generation(args, fulcrum, llama, "chat")
    print(f"generation, {args.max_tokens} tokens, /v1/chat/completions not streamed (tokens over the request):")
    results["chat_whole"] = chat_whole(args, fulcrum, llama)
    return results


def second_model(args, fulcrum, llama):
    """One chat request to the second model (another file: its own llama_model and context), --settle seconds idle
    (longer than Fulcrum's thread-idle: an idle context's thread and its OpenMP threads are gone by then), then the
    generation figures of the first model again."""
    other = Fulcrum(f"http://{fulcrum.host}:{fulcrum.port}", fulcrum.headers["Authorization"][7:], args.second_model, 0)
    body = {"messages": [{"role": "user", "content": CHAT_MESSAGE}], "max_tokens": args.max_tokens, "temperature": 0}
    start = time.perf_counter()
    out = other.post("/v1/chat/completions", body)
    seconds = time.perf_counter() - start
    print(
        f"  one request to {args.second_model}: {out['usage']['completion_tokens']} tokens in {seconds * 1000:.0f} ms "
        f"(its load included); then {args.settle:g} s idle"
    )
    time.sleep(args.settle)
    results = {"second_model": args.second_model, "settle_seconds": args.settle, "second_request_seconds": seconds}
    results.update(speed(args, fulcrum, llama))
    return results


def http_anchor(args, fulcrum):
    """Streamed chat over HTTP, Fulcrum against llama-cpp-python's own OpenAI server (llama_cpp.server: the same
    natives behind FastAPI and uvicorn) on the same file and settings, alternated; both ban the end tokens through
    logit_bias (the server applies it in Python at every token, as the in-process reference does with
    --python-logit-bias)."""
    server = Fulcrum(args.llama_server, "no-key", args.model, None)
    server.bias = fulcrum.bias
    body = {"messages": [{"role": "user", "content": CHAT_MESSAGE}], "max_tokens": args.max_tokens, "temperature": 0}

    def side(client):
        def run(i):
            streamed = client.biased(client.stream, "/v1/chat/completions", body)
            return streamed.decode_rate(), streamed.describe()

        return run

    side(fulcrum)(0)
    side(server)(0)
    return alternate(args.runs, side(fulcrum), side(server), "streamed chat over HTTP (llama.cpp: llama_cpp.server)")


def prompt_eval(args, fulcrum, llama):
    """A ~400-token raw prompt, max_tokens 1: prompt tokens per second (each run's prompt starts differently, so
    nothing of it is cached on either side)."""

    def prompt(i):
        return f"Document {i}.\n{LONG_TEXT}\nSummary:"

    def on_fulcrum(i):
        start = time.perf_counter()
        out = fulcrum.post("/v1/completions", {"prompt": prompt(i), "max_tokens": 1, "temperature": 0})
        seconds = time.perf_counter() - start
        tokens = out["usage"]["prompt_tokens"]
        return tokens / seconds, f"{tokens} prompt tokens in {seconds * 1000:.0f} ms"

    def on_llama(i):
        out, seconds = llama.complete(prompt(i), 1)
        tokens = out["usage"]["prompt_tokens"]
        return tokens / seconds, f"{tokens} prompt tokens in {seconds * 1000:.0f} ms"

    on_fulcrum(0)
    on_llama(0)
    return alternate(args.runs, on_fulcrum, on_llama, "prompt")


def first_token(args, fulcrum, llama):
    """Time to the first streamed text of a short raw prompt (different each run: nothing cached), in ms; end tokens
    banned as for generation, so that the first token is text."""

    def prompt(i):
        return f"Story {i}: {GEN_PROMPT}"

    def on_fulcrum(i):
        body = {"prompt": prompt(i), "max_tokens": 4, "temperature": 0}
        run = fulcrum.biased(fulcrum.stream, "/v1/completions", body)
        return run.ttft_ms(), f"{run.ttft_ms():.1f} ms"

    def on_llama(i):
        run = llama.stream("completion", prompt(i), 4)
        return run.ttft_ms(), f"{run.ttft_ms():.1f} ms"

    on_fulcrum(0)
    on_llama(0)
    return alternate(args.runs, on_fulcrum, on_llama, "first token")


def concurrency(args, fulcrum):
    """Fulcrum only: total completion tokens per second of 4 requests at once against 1 (alternated)."""

    def one(k):
        body = {"prompt": f"Story {k}: {GEN_PROMPT}", "max_tokens": args.max_tokens, "temperature": 0}
        return fulcrum.biased(fulcrum.post, "/v1/completions", body)["usage"]["completion_tokens"]

    def at_once(n):
        with ThreadPoolExecutor(n) as pool:
            start = time.perf_counter()
            tokens = sum(pool.map(one, range(n)))
            seconds = time.perf_counter() - start
        return tokens / seconds, f"{tokens} tokens in {seconds:.2f} s = {tokens / seconds:.1f} tokens/s"

    def llama_at_once(n):
        prompts = [f"Story {k}: {GEN_PROMPT}" for k in range(n)]
        rate = batched_rate(args.gguf, args.threads, args.context_size, args.batch, prompts, args.max_tokens)
        return rate, f"{rate:.1f} tokens/s"

    at_once(1)
    results = {"1": [], str(args.concurrent): []}
    reference = {"1": [], str(args.concurrent): []}
    for i in range(1, args.runs + 1):
        order = [1, args.concurrent] if i % 2 else [args.concurrent, 1]
        for n in order:
            value, detail = at_once(n)
            results[str(n)].append(value)
            print(f"  concurrency run {i}, {n} at once: Fulcrum {detail}")
            value, detail = llama_at_once(n)
            reference[str(n)].append(value)
            print(f"  concurrency run {i}, {n} at once: llama.cpp batched {detail}")
    return {
        "one": results["1"],
        "concurrent": results[str(args.concurrent)],
        "one_median": median(results["1"]),
        "concurrent_median": median(results[str(args.concurrent)]),
        "requests": args.concurrent,
        # llama-cpp-python's Llama decodes one sequence at a time; llama.cpp's own batching, through its C API
        # (bench/gguf_batched.py), is the reference of what batching gives on this machine
        "llama.cpp_batched_one": reference["1"],
        "llama.cpp_batched_concurrent": reference[str(args.concurrent)],
        "llama.cpp_batched_one_median": median(reference["1"]),
        "llama.cpp_batched_concurrent_median": median(reference[str(args.concurrent)]),
    }


def logprobs(args, fulcrum):
    """Top-5 logprobs of the first generated token of LOGPROBS_PROMPT on both sides, and their largest difference."""
    body = {"prompt": LOGPROBS_PROMPT, "max_tokens": 1, "temperature": 0, "logprobs": 5}
    result = {"prompt": LOGPROBS_PROMPT}
    try:
        result["fulcrum"] = fulcrum.post("/v1/completions", body)["choices"][0]["logprobs"]["top_logprobs"][0]
    except Refused as refused:
        result["fulcrum"] = None
        result["fulcrum_refused"] = str(refused)
    # llama-cpp-python gives logprobs only from a Llama made with logits_all=True (logits kept for every position of
    # the prompt); loaded for this alone, so that the speed figures are of the default, last-token-only, context
    reference = Llama(args.gguf, logits_all=True, **llama_settings(args))
    out = reference.create_completion(LOGPROBS_PROMPT, max_tokens=1, temperature=0, logprobs=5)
    # numpy floats, as llama-cpp-python gives them: plain floats for the JSON
    result["llama.cpp"] = {t: float(v) for t, v in out["choices"][0]["logprobs"]["top_logprobs"][0].items()}
    del reference
    if result["fulcrum"]:
        shared = sorted(set(result["fulcrum"]) & set(result["llama.cpp"]))
        result["shared_tokens"] = shared
        result["only_fulcrum"] = sorted(set(result["fulcrum"]) - set(result["llama.cpp"]))
        result["only_llama.cpp"] = sorted(set(result["llama.cpp"]) - set(result["fulcrum"]))
        diffs = [abs(result["fulcrum"][t] - result["llama.cpp"][t]) for t in shared]
        result["max_abs_diff"] = max(diffs) if diffs else float("nan")
    return result


def without_nan(value):
    """NaN (a figure that could not be had) as null, which JSON has."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: without_nan(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [without_nan(v) for v in value]
    return value


def ratio(a, b):
    return a / b if b and a == a and b == b else float("nan")


def table(results, args):
    rows = []
    n = args.max_tokens
    two = results.get("two_models")
    for key, label in (
        ("gen_completions", "/v1/completions"),
        ("gen_chat", "/v1/chat/completions"),
        ("chat_whole", "/v1/chat/completions not streamed"),
    ):
        r = results[key]
        note = " (Fulcrum without logit_bias)" if r.get("fulcrum_logit_bias_refused") else ""
        f, m = r["fulcrum_median"], r["llama.cpp_median"]
        rows.append(
            (f"generation tokens/s, {label}, {n} tokens{note}", f, m, ratio(f, m), ">= 95 %", ratio(f, m) >= 0.95)
        )
        one_switches = r["fulcrum_switches_per_token_median"]
        if two:
            # the share of llama.cpp's (measured alternated with it) rather than tokens/s: the machine's speed moves
            f2, m2 = two[key]["fulcrum_median"], two[key]["llama.cpp_median"]
            one = ratio(f, m)
            rows.append(
                (
                    f"  the same after one request to a second model ({two['second_model']})",
                    f2,
                    m2,
                    ratio(f2, m2),
                    f">= 95 % of one model's {one * 100:.0f} %",
                    ratio(f2, m2) >= 0.95 * one,
                )
            )
            two_switches = f"{two[key]['fulcrum_switches_per_token_median']:.1f} after the second model"
        else:
            two_switches = "no second model"
        rows.append(
            (
                f"  Fulcrum's voluntary context switches a token: {one_switches:.1f} one model, {two_switches}",
                None,
                None,
                None,
                "(information)",
                None,
            )
        )
    r = results.get("http_anchor")
    if r:
        f, m = r["fulcrum_median"], r["llama.cpp_median"]
        rows.append(
            (
                f"streamed chat over HTTP, tokens/s, {n} tokens (llama.cpp: llama_cpp.server)",
                f,
                m,
                ratio(f, m),
                ">= 100 %",
                ratio(f, m) >= 1.0,
            )
        )
    r = results["prompt"]
    f, m = r["fulcrum_median"], r["llama.cpp_median"]
    rows.append(("prompt evaluation tokens/s (~400 tokens)", f, m, ratio(f, m), ">= 95 %", ratio(f, m) >= 0.95))
    r = results["first_token"]
    f, m = r["fulcrum_median"], r["llama.cpp_median"]
    rows.append(("time to first token, ms (short prompt)", f, m, ratio(f, m), "within 10 %", ratio(f, m) <= 1.10))
    r = results["concurrency"]
    f1, f4 = r["one_median"], r["concurrent_median"]
    l1, l4 = r["llama.cpp_batched_one_median"], r["llama.cpp_batched_concurrent_median"]
    rows.append(
        (
            f"{r['requests']} concurrent tokens/s (1 at once: Fulcrum {f1:.1f}, llama.cpp batched {l1:.1f})",
            f4,
            l4,
            ratio(f4, f1),
            f">= 2x one (llama.cpp's own: {ratio(l4, l1):.2f}x)",
            ratio(f4, f1) >= 2,
        )
    )
    r = results["logprobs"]
    if r.get("fulcrum"):
        rows.append(
            (
                "top-5 logprobs, max abs difference (nats)",
                r["max_abs_diff"],
                "reference",
                None,
                "<= 0.01",
                r["max_abs_diff"] <= 0.01,
            )
        )
    else:
        rows.append(("top-5 logprobs, max abs difference (nats)", "refused", "given", None, "<= 0.01", False))
    rows.append(
        (
            "RSS after loading the base, MiB (llama.cpp: the Python process)",
            results["rss"]["fulcrum_base_mib"],
            results["rss"]["llama.cpp_process_mib"],
            None,
            "(information)",
            None,
        )
    )
    rows.extend(adapter_rows(results["rss"]["adapters"], results["rss"].get("adapters_skipped")))

    def cell(value, digits=1):
        if value is None:
            return "-"
        if isinstance(value, str):
            return value
        return f"{value:.{digits}f}" if value == value else "n/a"

    def ratio_cell(label, value):
        if value is None:
            return "-"
        if value != value:
            return "n/a"
        return f"{value:.2f}x" if "concurrent" in label else f"{value * 100:.0f} %"

    results["summary"] = [
        {"metric": label, "fulcrum": f, "llama.cpp": m, "ratio": q, "target": target, "met": met}
        for label, f, m, q, target, met in rows
    ]
    lines = ["| metric | Fulcrum | llama.cpp | ratio | target | met |", "|---|---|---|---|---|---|"]
    for label, f, m, q, target, met in rows:
        digits = 4 if "logprobs" in label else 1
        met_cell = "-" if met is None else ("yes" if met else "no")
        lines.append(
            f"| {label} | {cell(f, digits)} | {cell(m, digits)} | {ratio_cell(label, q)} | {target} | {met_cell} |"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--pid", type=int, required=True, help="Fulcrum's process, for its RSS")
    parser.add_argument("--gguf", required=True)
    parser.add_argument("--model", default="bench-gguf")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--context-size", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--concurrent", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", required=True)
    parser.add_argument(
        "--second-model", help="another GGUF model of the server: the figures again after using it once"
    )
    parser.add_argument("--llama-server", help="llama-cpp-python's OpenAI server on the same file (its base URL)")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds idle after the second model's request")
    parser.add_argument(
        "--python-logit-bias",
        action="store_true",
        help="ban the end tokens through llama-cpp-python's own logit_bias (a Python callback per token)",
    )
    parser.add_argument("--adapters-json", help="the JSON bench/gguf_adapters.py wrote (the base plus N checkpoints)")
    parser.add_argument("--adapters-skipped", help="why there is no adapters JSON (the table says so)")
    args = parser.parse_args()

    print(f"llama-cpp-python {llama_cpp.__version__} ({sys.executable}), {args.gguf}")
    if llama_cpp.__version__ != "0.3.36":
        print(f"  note: llama-cpp-python {llama_cpp.__version__}, not the 0.3.36 this benchmark was written against")
    llama = LlamaSide(args)
    fulcrum = Fulcrum(args.base, args.key, args.model, args.pid)
    fulcrum.bias = {str(t): FULCRUM_BAN for t in llama.eog}
    eog = {t: llama.llm.detokenize([t], special=True).decode(errors="replace") for t in llama.eog}
    print(f"end-of-generation tokens banned on both sides: {eog}")

    results = {
        "settings": {
            "gguf": args.gguf,
            "threads": args.threads,
            "context_size": args.context_size,
            "batch": args.batch,
            "parallel": args.parallel,
            "max_tokens": args.max_tokens,
            "runs": args.runs,
            "llama_cpp_python": llama_cpp.__version__,
            "cores": os.cpu_count(),
            "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
            "llama.cpp_ban": "llama-cpp-python's logit_bias" if args.python_logit_bias else "llama.cpp's sampler",
        },
        "load_average_before": os.getloadavg(),
    }
    # loads the model in Fulcrum (its first request), then the RSS of both processes with the base loaded
    fulcrum.post("/v1/completions", {"prompt": GEN_PROMPT, "max_tokens": 1, "temperature": 0})
    llama.complete(GEN_PROMPT, 1)
    results["rss"] = {"fulcrum_base_mib": fulcrum.rss_mib(), "llama.cpp_process_mib": rss_mib("self")}
    print(
        f"RSS after loading the base: Fulcrum {results['rss']['fulcrum_base_mib']:.0f} MiB, this Python process "
        f"with llama-cpp-python {results['rss']['llama.cpp_process_mib']:.0f} MiB"
    )

    results.update(speed(args, fulcrum, llama))
    if args.second_model:
        print(f"two models: one request to {args.second_model}, then the generation figures of {args.model} again:")
        results["two_models"] = second_model(args, fulcrum, llama)
    if args.llama_server:
        print(f"streamed chat over HTTP against llama-cpp-python's server ({args.llama_server}):")
        results["http_anchor"] = http_anchor(args, fulcrum)
    print("prompt evaluation:")
    results["prompt"] = prompt_eval(args, fulcrum, llama)
    print("time to first token:")
    results["first_token"] = first_token(args, fulcrum, llama)
    print(f"concurrency ({args.concurrent} requests at once against one; Fulcrum's parallel={args.parallel}):")
    results["concurrency"] = concurrency(args, fulcrum)
    print("logprobs:")
    results["logprobs"] = logprobs(args, fulcrum)
    r = results["logprobs"]
    print(f"  llama.cpp: {r['llama.cpp']}")
    if r["fulcrum"] is None:
        print(f"  Fulcrum refused logprobs: {r['fulcrum_refused']}")
    else:
        print(f"  Fulcrum:   {r['fulcrum']}")
        print(f"  max abs difference over {len(r['shared_tokens'])} shared tokens: {r['max_abs_diff']:.5f} nats")
        if r["only_fulcrum"] or r["only_llama.cpp"]:
            print(f"  in one top 5 only: Fulcrum {r['only_fulcrum']}, llama.cpp {r['only_llama.cpp']}")
    # the base plus N LoRA checkpoints: measured by bench/gguf_adapters.py (its adapters_rss) before this script, on
    # this server's data before a restart (gguf.sh); its figures join this table and JSON
    if args.adapters_json:
        with open(args.adapters_json) as adapters:
            results["rss"]["adapters"] = json.load(adapters)
    else:
        results["rss"]["adapters"] = None
        results["rss"]["adapters_skipped"] = args.adapters_skipped
    results["rss"]["fulcrum_end_mib"] = fulcrum.rss_mib()
    results["load_average_after"] = os.getloadavg()

    print()
    print(table(results, args))
    with open(args.json, "w") as out:
        json.dump(without_nan(results), out, indent=2)
    print(f"\nwritten to {args.json}")


if __name__ == "__main__":
    main()
