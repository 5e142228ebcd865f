"""Conversations to token sequences: the tokenizer's chat template, with a mask of the tokens that are trained."""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Sequence:
    """One tokenised conversation. `mask[i]` says whether token i is trained (predicted from tokens before it)."""

    ids: list[int]
    mask: list[bool]
    # Behaviour-policy log-probability of each token where the trajectory carried one (NaN elsewhere).
    logprobs: list[float] = field(default_factory=list)
    advantage: float = 0.0

    @property
    def trainable_tokens(self) -> int:
        return sum(self.mask)


def content_text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list joined."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def normalise(message: dict[str, Any]) -> dict[str, Any]:
    """A chat message the templates understand: text content; tool calls with their arguments as objects."""
    out: dict[str, Any] = {"role": message["role"], "content": content_text(message.get("content"))}
    if message.get("tool_calls"):
        calls = []
        for call in message["tool_calls"]:
            function = dict(call.get("function", call))
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                with contextlib.suppress(json.JSONDecodeError):
                    function["arguments"] = json.loads(arguments)
            calls.append({"type": "function", "function": function, **({"id": call["id"]} if "id" in call else {})})
        out["tool_calls"] = calls
    for key in ("tool_call_id", "name"):
        if message.get(key) is not None:
            out[key] = message[key]
    return out


# A sampled token: its id when the sampler named it, and its log-probability.
Sampled = tuple[int | None, float]


class TemplateError(ValueError):
    """The chat template renders an earlier part of a conversation differently once a turn is added."""


def render(tokenizer, messages: list[dict[str, Any]], tools: list[dict] | None, generation_prompt: bool) -> str:
    return tokenizer.apply_chat_template(
        messages, tools=tools or None, tokenize=False, add_generation_prompt=generation_prompt
    )


def encode(tokenizer, text: str) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False) if text else []


def tokenize(
    tokenizer,
    messages: list[dict[str, Any]],
    trainable: list[bool],
    tools: list[dict] | None = None,
    behaviour: list[list[Sampled] | None] | None = None,
) -> Sequence:
    """
    Tokenises a conversation turn by turn, as a sampler sees it: the context up to a trained assistant turn rendered
    with the generation prompt, then the turn itself. Only the trained turns' tokens are masked in (their text and the
    template's end-of-turn tokens, so the model learns to stop). `behaviour[i]`, when given for a trained turn, holds
    the sampler's tokens and their log-probabilities: token ids (vLLM's `token_id:N` tokens) are trained as sampled;
    without ids, the log-probabilities are kept when the turn's text encodes to as many tokens. Nothing after the last
    trained turn is kept (nothing there is trained).
    """
    messages = [normalise(m) for m in messages]
    ids: list[int] = []
    mask: list[bool] = []
    logprobs: list[float] = []
    done = ""
    for i, message in enumerate(messages):
        if not trainable[i]:
            continue
        prefix = render(tokenizer, messages[:i], tools, True) if i > 0 else render(tokenizer, [], tools, True)
        full = render(tokenizer, messages[: i + 1], tools, False)
        if not prefix.startswith(done) or not full.startswith(prefix):
            raise TemplateError(f"the chat template does not render message {i} after the messages before it")
        context = encode(tokenizer, prefix[len(done) :])
        ids += context
        mask += [False] * len(context)
        logprobs += [math.nan] * len(context)
        answer = full[len(prefix) :]
        content = message["content"]
        sampled = behaviour[i] if behaviour else None
        if content and answer.startswith(content):
            head, tail = encode(tokenizer, content), encode(tokenizer, answer[len(content) :])
            if sampled and all(token_id is not None for token_id, _ in sampled):
                head = [token_id for token_id, _ in sampled]
        else:
            head, tail = [], encode(tokenizer, answer)
        ids += head + tail
        mask += [True] * (len(head) + len(tail))
        if sampled is not None and len(sampled) == len(head) and head:
            logprobs += [logprob for _, logprob in sampled] + [math.nan] * len(tail)
        else:
            logprobs += [math.nan] * (len(head) + len(tail))
        done = full
    return Sequence(ids=ids, mask=mask, logprobs=logprobs)


def sft_sequence(tokenizer, example: dict[str, Any], assistant_turns: str = "all") -> Sequence:
    """An SFT example `{"messages": [...], "tools": [...]}`: loss on all assistant turns, or on the last only."""
    messages = example["messages"]
    assistant = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
    chosen = set(assistant[-1:] if assistant_turns == "last" else assistant)
    return tokenize(tokenizer, messages, [i in chosen for i in range(len(messages))], example.get("tools"))


def choice_logprobs(choice: dict[str, Any]) -> list[Sampled] | None:
    """The sampled tokens of a Choice (`logprobs.content`): (token id when the token is `token_id:N`, logprob)."""
    content = (choice.get("logprobs") or {}).get("content") or []
    sampled: list[Sampled] = []
    for entry in content:
        logprob = entry.get("logprob") if isinstance(entry, dict) else None
        if not isinstance(logprob, (int, float)):
            return None
        token = entry.get("token")
        token_id = None
        if isinstance(token, str) and token.startswith("token_id:") and token[9:].isdigit():
            token_id = int(token[9:])
        sampled.append((token_id, float(logprob)))
    return sampled or None


def trajectory_sequence(tokenizer, trajectory: dict[str, Any], require_logprobs: bool = False) -> Sequence:
    """
    An ART trajectory: `messages_and_choices` holds chat messages (context) and OpenAI Choices (the policy's turns,
    trained). With `require_logprobs`, a Choice without logprobs is context, not trained (as ART does when training
    without logprobs is not allowed).
    """
    messages, trainable, behaviour = [], [], []
    for item in trajectory["messages_and_choices"]:
        is_choice = isinstance(item.get("message"), dict)
        message = item["message"] if is_choice else item
        sampled = choice_logprobs(item) if is_choice else None
        messages.append(message)
        trainable.append(is_choice and (sampled is not None or not require_logprobs))
        behaviour.append(sampled)
    return tokenize(tokenizer, messages, trainable, trajectory.get("tools"), behaviour)
