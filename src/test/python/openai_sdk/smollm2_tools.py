"""The official OpenAI Python SDK's structured outputs and tool loop, unchanged, against SmolLM2-135M-Instruct served by
llama.cpp inside Fulcrum.

SmolLM2's template knows no tools: Fulcrum's generic chat format lists them in a system message, holds the answer to
its JSON shape and gives past calls and tool answers back to the model as JSON. `chat.completions.parse` sends a
Pydantic model as a strict `json_schema` and parses the answer into it; with `pydantic_function_tool` tools it parses
each call's arguments into the tool's model. The loop runs three turns: a call, the tool's answer given back, then a
second question and its call.

Environment: BASE_URL (Fulcrum's /v1), API_KEY, MODEL (a GGUF catalog model of SmolLM2's file).
Prints "smollm2 tools: ok" at the end; any failed check raises.
"""

import json
import os

import openai
from openai import OpenAI
from pydantic import BaseModel

client = OpenAI(base_url=os.environ["BASE_URL"], api_key=os.environ["API_KEY"])
MODEL = os.environ["MODEL"]


class Capital(BaseModel):
    country: str
    capital: str


class GetWeather(BaseModel):
    """The current weather in a city."""

    city: str


# structured output: the answer parses into the Pydantic model
parsed = client.chat.completions.parse(
    model=MODEL,
    temperature=0,
    max_tokens=48,
    messages=[{"role": "user", "content": "What is the capital of France? Answer as JSON."}],
    response_format=Capital,
)
capital = parsed.choices[0].message.parsed
assert isinstance(capital, Capital) and "Paris" in capital.capital, parsed
print("parsed:", capital)

# a tool loop of three turns: each call's arguments parsed into the tool's model
tools = [openai.pydantic_function_tool(GetWeather, name="get_weather")]
messages = [{"role": "user", "content": "What is the weather in Paris?"}]
WEATHER = {"Paris": "sunny, 21 C", "Rome": "cloudy, 18 C"}


def turn():
    answer = client.chat.completions.parse(model=MODEL, temperature=0, max_tokens=48, messages=messages, tools=tools)
    message = answer.choices[0].message
    messages.append(message.model_dump(exclude_none=True, exclude={"parsed"}))
    return answer.choices[0], message


choice, message = turn()
assert choice.finish_reason == "tool_calls" and message.content is None, choice
call = message.tool_calls[0]
assert isinstance(call.function.parsed_arguments, GetWeather), call
assert "Paris" in call.function.parsed_arguments.city, call
print("turn 1:", call.function.name, call.function.parsed_arguments)
city = call.function.parsed_arguments.city
messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps({"weather": WEATHER.get(city, "?")})})

choice, message = turn()
assert choice.finish_reason in ("stop", "tool_calls"), choice
if message.tool_calls:
    assert all(isinstance(c.function.parsed_arguments, GetWeather) for c in message.tool_calls), message
else:
    assert message.content, message
print("turn 2:", message.content or message.tool_calls)

messages.append({"role": "user", "content": "What is the weather in Rome?"})
choice, message = turn()
assert choice.finish_reason == "tool_calls", choice
call = message.tool_calls[0]
assert isinstance(call.function.parsed_arguments, GetWeather) and "Rome" in call.function.parsed_arguments.city, call
print("turn 3:", call.function.name, call.function.parsed_arguments)
print("smollm2 tools: ok")
