"""The official OpenAI Python SDK, unchanged, against a GGUF model served by llama.cpp inside Fulcrum.

Environment: BASE_URL (Fulcrum's /v1), API_KEY, PROJECT (team/project), MODEL (a GGUF catalog model). The model is the
tiny random Llama of `fulcrum-worker make-tiny-model --gguf`: its text is noise, so the checks are about the API's
behaviour (determinism, grammar-constrained JSON, tool calls, streaming, usage, text completions, embeddings), not about
what it says.
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

# streamed, the call comes as OpenAI streams one: its id and name first, then its arguments piece by piece, put
# back together by index
streamed_calls: dict[int, dict] = {}
argument_pieces = 0
for chunk in chat(temperature=0, max_tokens=400, tools=TOOLS, tool_choice="required", stream=True):
    for choice in chunk.choices:
        for delta in choice.delta.tool_calls or []:
            if delta.index not in streamed_calls:
                assert delta.id and delta.function.name, delta
                streamed_calls[delta.index] = {"name": delta.function.name, "arguments": ""}
            else:
                assert delta.id is None and delta.function.name is None, delta
            streamed_calls[delta.index]["arguments"] += delta.function.arguments or ""
            argument_pieces += 1 if delta.function.arguments else 0
assert len(streamed_calls) == 1 and streamed_calls[0]["name"] in ("get_weather", "noop"), streamed_calls
assert argument_pieces > 1, streamed_calls
json.loads(streamed_calls[0]["arguments"])

# tool_choice auto and none: the tools go through the chat template, the answer is free (the random model answers
# text; the markup of its calls is read by ToolCallsTest); the same greedy answer with none as with auto when
# there is no call
auto = chat(temperature=0, max_tokens=24, tools=TOOLS, tool_choice="auto").choices[0]
none = chat(temperature=0, max_tokens=24, tools=TOOLS, tool_choice="none").choices[0]
assert auto.message.tool_calls is None and auto.message.content == none.message.content, (auto, none)
assert none.message.tool_calls is None and none.finish_reason in ("stop", "length"), none
streamed_auto = "".join(
    choice.delta.content or ""
    for chunk in chat(temperature=0, max_tokens=24, tools=TOOLS, stream=True)
    for choice in chunk.choices
)
assert streamed_auto == auto.message.content, (streamed_auto, auto)

# text completions: the prompt continued as written, greedy twice the same, streamed the same, usage counted
PROMPT = "Once upon a time"
text = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=12, temperature=0)
again = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=12, temperature=0)
assert text.object == "text_completion" and text.choices[0].text == again.choices[0].text, (text, again)
assert text.choices[0].finish_reason in ("stop", "length") and text.usage.prompt_tokens > 1, text
assert 0 < text.usage.completion_tokens <= 12 and text.model == MODEL, text.usage
pieces, usage = [], None
for chunk in client.completions.create(
    model=MODEL, prompt=PROMPT, max_tokens=12, temperature=0, stream=True, stream_options={"include_usage": True}
):
    if chunk.usage:
        usage = chunk.usage
    pieces.extend(choice.text for choice in chunk.choices)
assert "".join(pieces) == text.choices[0].text and usage.prompt_tokens == text.usage.prompt_tokens, (pieces, usage)
two = client.completions.create(model=MODEL, prompt=[PROMPT, "Hello"], n=2, max_tokens=4, temperature=0, echo=True)
assert [c.index for c in two.choices] == [0, 1, 2, 3], two
assert two.choices[0].text.startswith(PROMPT) and two.choices[2].text.startswith("Hello"), two
print("completions:", repr(text.choices[0].text), text.usage)

# embeddings of two inputs: one normalized vector each, the same text the same vector, float and base64 alike
embedded = client.embeddings.create(model=MODEL, input=["The cat sat on the mat.", "A dog barked."])
assert [e.index for e in embedded.data] == [0, 1] and embedded.model == MODEL, embedded
first_vector, second_vector = embedded.data[0].embedding, embedded.data[1].embedding
assert len(first_vector) == len(second_vector) > 0 and first_vector != second_vector
assert abs(sum(x * x for x in first_vector) - 1) < 1e-3, sum(x * x for x in first_vector)
assert embedded.usage.prompt_tokens > 2 and embedded.usage.total_tokens == embedded.usage.prompt_tokens
single = client.embeddings.create(model=MODEL, input="The cat sat on the mat.")  # the SDK asks for base64
assert max(abs(a - b) for a, b in zip(single.data[0].embedding, first_vector, strict=True)) < 1e-5
print("embeddings:", len(first_vector), "dimensions", embedded.usage)

# logprobs: every token's, with its top alternatives; greedy tokens are the most likely; streamed the same tokens
scored = chat(temperature=0, max_tokens=12, logprobs=True, top_logprobs=3).choices[0]
tokens = scored.logprobs.content
assert 0 < len(tokens) <= 12 and all(len(t.top_logprobs) == 3 for t in tokens), scored
assert all(t.token == t.top_logprobs[0].token and abs(t.logprob - t.top_logprobs[0].logprob) < 1e-6 for t in tokens)
assert all(t.logprob <= 0 and t.bytes for t in tokens), tokens
streamed_tokens = []
for chunk in chat(temperature=0, max_tokens=12, logprobs=True, top_logprobs=3, stream=True):
    for choice in chunk.choices:
        if choice.logprobs and choice.logprobs.content:
            streamed_tokens += [t.token for t in choice.logprobs.content]
assert streamed_tokens == [t.token for t in tokens], (streamed_tokens, tokens)
text_scored = client.completions.create(model=MODEL, prompt="Once upon a", max_tokens=4, temperature=0, logprobs=2)
lp = text_scored.choices[0].logprobs
assert 1 <= len(lp.tokens) <= 4 and len(lp.token_logprobs) == len(lp.top_logprobs) == len(lp.tokens), lp
assert lp.text_offset[0] == 0 and all(1 <= len(top) <= 2 for top in lp.top_logprobs), lp
# echo with logprobs scores the prompt (lm-eval's multiple choice): every prompt token, the first without a logprob,
# then the continuation's; max_tokens 0 is the prompt alone
echoed = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=2, temperature=0, logprobs=1, echo=True)
lp = echoed.choices[0].logprobs
prompt_count = echoed.usage.prompt_tokens
assert echoed.choices[0].text.startswith(PROMPT) and len(lp.tokens) == prompt_count + echoed.usage.completion_tokens
assert lp.token_logprobs[0] is None and lp.top_logprobs[0] is None, lp
assert all(x <= 0 for x in lp.token_logprobs[1:]) and all(len(top) == 1 for top in lp.top_logprobs[1:]), lp
assert lp.text_offset[prompt_count] == len(PROMPT), lp.text_offset
alone = client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=0, logprobs=1, echo=True).choices[0]
assert alone.text == PROMPT and alone.finish_reason == "length", alone
alone_scores = alone.logprobs.token_logprobs
assert len(alone_scores) == prompt_count and alone_scores[0] is None, alone.logprobs
assert all(abs(a - b) < 1e-4 for a, b in zip(alone_scores[1:], lp.token_logprobs[1:prompt_count], strict=True))
print("logprobs:", [(t.token, round(t.logprob, 3)) for t in tokens[:3]], "prompt", lp.token_logprobs[:4])

# what the engine refuses is a 400 naming the field, in the SDK's error class
for kwargs, param in (
    ({"top_logprobs": 2}, "top_logprobs"),
    ({"logit_bias": {"999999999": 5}}, "logit_bias"),
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

for call, param in (
    (lambda: client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=0), "max_tokens"),
    (lambda: client.completions.create(model=MODEL, prompt=[1, 2, 10**6]), "prompt"),
    (lambda: client.completions.create(model=MODEL, prompt=PROMPT, max_tokens=513), "max_tokens"),
    (lambda: client.embeddings.create(model=MODEL, input=[[1, 2, 10**6]]), "input"),
    (lambda: client.embeddings.create(model=MODEL, input="x", dimensions=3), "dimensions"),
):
    try:
        call()
        raise AssertionError(f"{param} was accepted")
    except openai.BadRequestError as e:
        assert e.status_code == 400 and e.param == param, (e, e.param)

print("openai-python gguf e2e: ok")
