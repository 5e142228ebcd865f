"""The official OpenAI Python SDK, unchanged, against a GGUF model served by llama.cpp inside Fulcrum.

Environment: BASE_URL (Fulcrum's /v1), API_KEY, PROJECT (team/project), MODEL (a GGUF catalog model). The model is the
tiny random Llama of `fulcrum-worker make-tiny-model --gguf`: its text is noise, so the checks are about the API's
behaviour (determinism, grammar-constrained JSON, tool calls, streaming, usage), not about what it says.
Prints "openai-python gguf e2e: ok" at the end; any failed check raises.
"""

import json
import os

import openai
from openai import OpenAI

client = OpenAI(base_url=os.environ["BASE_URL"], api_key=os.environ["API_KEY"], project=os.environ["PROJECT"])
MODEL = os.environ["MODEL"]
USER = [{"role": "user", "content": "What is the capital of France?"}]


def chat(**kwargs):
    return client.chat.completions.create(model=MODEL, messages=kwargs.pop("messages", USER), **kwargs)


# plain, greedy: the same answer twice; usage counted
first = chat(temperature=0, max_tokens=24)
second = chat(temperature=0, max_tokens=24)
answer = first.choices[0].message.content
assert isinstance(answer, str) and answer, first
assert answer == second.choices[0].message.content, (answer, second)
assert first.choices[0].finish_reason in ("stop", "length"), first
assert first.usage.prompt_tokens > 5 and 0 < first.usage.completion_tokens <= 24, first.usage
assert first.model == MODEL
print("plain greedy:", repr(answer), first.usage)

# streamed: the same text piece by piece, the usage chunk when asked
pieces, usage, finish = [], None, None
for chunk in chat(temperature=0, max_tokens=24, stream=True, stream_options={"include_usage": True}):
    if chunk.usage:
        usage = chunk.usage
    for choice in chunk.choices:
        if choice.delta.content:
            pieces.append(choice.delta.content)
        finish = choice.finish_reason or finish
assert "".join(pieces) == answer, (pieces, answer)
assert len(pieces) > 1 and finish in ("stop", "length") and usage.prompt_tokens == first.usage.prompt_tokens, usage
print("streamed:", len(pieces), "pieces")

# sampled with a seed: the same answer for the same seed
a = chat(temperature=1, seed=7, max_tokens=16).choices[0].message.content
b = chat(temperature=1, seed=7, max_tokens=16).choices[0].message.content
assert a == b, (a, b)

# max_tokens: finish_reason length
short = chat(temperature=0, max_tokens=3)
assert short.choices[0].finish_reason == "length" and short.usage.completion_tokens <= 4, short

# stop: the greedy answer cut before the stop string
# (a stop string of two printable ASCII characters after the start: random text has broken UTF-8 elsewhere)
at = next(i for i in range(2, len(answer) - 1) if answer[i : i + 2].isascii() and answer[i : i + 2].isalnum())
stop = answer[at : at + 2]
cut = chat(temperature=0, max_tokens=24, stop=[stop]).choices[0].message.content
assert cut == answer[: answer.find(stop)], (cut, stop, answer)

# response_format json_schema: every sampled answer parses and matches the schema
SCHEMA = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "enum": ["yes", "no", "maybe"]},
        "confidence": {"type": "integer", "minimum": 0, "maximum": 10},
        "tags": {"type": "array", "items": {"type": "boolean"}, "maxItems": 3},
    },
    "required": ["answer", "confidence", "tags"],
    "additionalProperties": False,
}
for seed in range(5):
    response = chat(
        temperature=1,
        seed=seed,
        max_tokens=500,  # the grammar allows runs of whitespace between tokens
        response_format={"type": "json_schema", "json_schema": {"name": "verdict", "schema": SCHEMA, "strict": True}},
    )
    value = json.loads(response.choices[0].message.content)
    assert set(value) == {"answer", "confidence", "tags"}, value
    assert value["answer"] in ("yes", "no", "maybe") and isinstance(value["confidence"], int), value
    assert 0 <= value["confidence"] <= 10 and all(isinstance(t, bool) for t in value["tags"]), value
    assert len(value["tags"]) <= 3, value
print("json_schema:", value)

# response_format json_object: a JSON object
# (free-form JSON may run past max_tokens on a random model; an answer that ended must be an object)
obj = chat(temperature=0, max_tokens=400, response_format={"type": "json_object"}).choices[0]
assert obj.finish_reason == "length" or isinstance(json.loads(obj.message.content), dict), obj

# a forced tool call: arguments match the tool's schema, plain and streamed
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather of a city",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "enum": ["Paris", "Tokyo", "Lima"]},
                    "days": {"type": "integer", "minimum": 1, "maximum": 7},
                },
                "required": ["city", "days"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {"name": "noop", "parameters": {"type": "object", "properties": {}, "additionalProperties": False}},
    },
]
for seed in range(3):
    called = chat(
        temperature=1,
        seed=seed,
        max_tokens=400,
        tools=TOOLS,
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
    ).choices[0]
    assert called.finish_reason == "tool_calls", called
    call = called.message.tool_calls[0]
    assert call.type == "function" and call.function.name == "get_weather" and call.id, call
    arguments = json.loads(call.function.arguments)
    assert set(arguments) == {"city", "days"} and arguments["city"] in ("Paris", "Tokyo", "Lima"), arguments
    assert 1 <= arguments["days"] <= 7, arguments
print("tool call:", called.message.tool_calls[0].function)

streamed_calls = []
for chunk in chat(temperature=0, max_tokens=400, tools=TOOLS, tool_choice="required", stream=True):
    for choice in chunk.choices:
        streamed_calls.extend(choice.delta.tool_calls or [])
assert len(streamed_calls) == 1 and streamed_calls[0].function.name in ("get_weather", "noop"), streamed_calls
json.loads(streamed_calls[0].function.arguments)

# what the engine refuses is a 400 naming the field, in the SDK's error class
for kwargs, param in (
    ({"logprobs": True, "top_logprobs": 2}, "logprobs"),
    ({"tools": TOOLS, "tool_choice": "auto"}, "tool_choice"),
    (
        {"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"$ref": "#/a"}}}},
        "response_format.json_schema.schema",
    ),
):
    try:
        chat(max_tokens=4, **kwargs)
        raise AssertionError(f"{kwargs} was accepted")
    except openai.BadRequestError as e:
        assert e.status_code == 400 and e.param == param, (e, e.param)

print("openai-python gguf e2e: ok")
