"""Fulcrum's OpenAI surface through the official OpenAI Python SDK (``openai`` from PyPI), unchanged.

Run by OpenAiPythonSdkTest with BASE_URL (<fulcrum>/v1), API_KEY, PROJECT (team/project), BUILTIN_MODEL,
EMBEDDING_MODEL (the local embedding model), UPSTREAM_MODEL (an upstream without the Responses API answering
"Hello from upstream") and RESPONSES_MODEL (an upstream with it). Exits non-zero on the first failed expectation.
"""

import math
import os

import openai
from openai import OpenAI

ANSWER = "Hello from upstream"


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"{name} is not set")
    return value


def check(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(f"expectation failed: {message}")


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


client = OpenAI(base_url=env("BASE_URL"), api_key=env("API_KEY"), project=env("PROJECT"), max_retries=0)
builtin, embedder = env("BUILTIN_MODEL"), env("EMBEDDING_MODEL")
upstream, responder = env("UPSTREAM_MODEL"), env("RESPONSES_MODEL")

# text completions: the built-in model, plain and streamed (the same seed gives the same text)
completion = client.completions.create(model=builtin, prompt="Once upon a time", max_tokens=8, seed=7)
check(completion.object == "text_completion", f"object {completion.object}")
check(completion.model == builtin, f"model {completion.model}")
check(completion.usage.prompt_tokens == 16, f"usage {completion.usage}")
streamed = ""
usage = None
for chunk in client.completions.create(
    model=builtin,
    prompt="Once upon a time",
    max_tokens=8,
    seed=7,
    stream=True,
    stream_options={"include_usage": True},
):
    if chunk.choices:
        streamed += chunk.choices[0].text
    if chunk.usage:
        usage = chunk.usage
check(streamed == completion.choices[0].text, f"streamed {streamed!r} == plain {completion.choices[0].text!r}")
check(usage is not None and usage.completion_tokens == completion.usage.completion_tokens, f"stream usage {usage}")
# and an upstream
completion = client.completions.create(model=upstream, prompt="Hi")
check(completion.choices[0].text == ANSWER, f"upstream text {completion.choices[0].text!r}")

# embeddings of two inputs: the SDK asks for base64 and decodes it; floats on request
two = ["The cat sits on the mat.", "A cat is sitting on a rug."]
default = client.embeddings.create(model=embedder, input=two)
check(len(default.data) == 2 and len(default.data[0].embedding) == 384, "two 384-dimensional vectors")
floats = client.embeddings.create(model=embedder, input=two, encoding_format="float")
check(
    all(abs(x - y) < 1e-6 for x, y in zip(default.data[1].embedding, floats.data[1].embedding, strict=True)),
    "base64 and float give the same vector",
)
check(default.usage.prompt_tokens > 0 and default.usage.total_tokens == default.usage.prompt_tokens, "usage")
unrelated = client.embeddings.create(model=embedder, input="Quarterly interest rates rose sharply.").data[0]
close = cosine(default.data[0].embedding, default.data[1].embedding)
far = cosine(default.data[0].embedding, unrelated.embedding)
check(close > far + 0.3, f"paraphrases {close:.3f} closer than unrelated {far:.3f}")
vectors = client.embeddings.create(model=upstream, input=["a", "b"], encoding_format="float")
check([d.embedding for d in vectors.data] == [[0.0, 0.5], [1.0, 0.5]], f"upstream vectors {vectors.data}")
try:
    client.embeddings.create(model=embedder, input="x", dimensions=64)
    raise AssertionError("dimensions accepted")
except openai.BadRequestError as e:
    check(e.status_code == 400 and "dimensions" in str(e), f"dimensions refused: {e}")

# responses: the built-in model through the bridge, plain and streamed
response = client.responses.create(
    model=builtin, input="Hi", instructions="Be brief.", max_output_tokens=16, temperature=0
)
check(response.object == "response" and response.model == builtin, f"response {response.model}")
check(response.status in ("completed", "incomplete"), f"status {response.status}")
check(response.usage.input_tokens > 0, f"usage {response.usage}")
types = []
deltas = ""
final = None
for event in client.responses.create(
    model=builtin, input="Hi", instructions="Be brief.", max_output_tokens=16, temperature=0, stream=True
):
    types.append(event.type)
    if event.type == "response.output_text.delta":
        deltas += event.delta
    if event.type in ("response.completed", "response.incomplete"):
        final = event.response
check(types[0] == "response.created" and "response.output_text.delta" in types, f"event types {types}")
check(deltas == response.output_text, f"streamed {deltas!r} == plain {response.output_text!r}")
check(final is not None and final.output_text == response.output_text, "the final event holds the text")
# an upstream without the Responses API (bridged) and one with it (passed through)
for model in (upstream, responder):
    response = client.responses.create(model=model, input=[{"role": "user", "content": "Hi"}])
    check(response.output_text == ANSWER, f"{model}: {response.output_text!r}")
    with client.responses.stream(model=model, input="Hi") as stream:
        text = "".join(e.delta for e in stream if e.type == "response.output_text.delta")
        check(text == ANSWER, f"{model} streamed: {text!r}")
        check(stream.get_final_response().output_text == ANSWER, f"{model}: final response")
try:
    client.responses.create(model=builtin, input="Hi", previous_response_id="resp_123")
    raise AssertionError("previous_response_id accepted")
except openai.BadRequestError as e:
    check(e.body.get("param") == "previous_response_id", f"param {e.body}")

print("openai-python e2e: ok")
