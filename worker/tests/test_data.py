import math

from fulcrum_worker import data


def trained_text(tokenizer, sequence):
    return tokenizer.decode([t for t, m in zip(sequence.ids, sequence.mask, strict=True) if m])


def conversation():
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris"},
        {"role": "user", "content": [{"type": "text", "text": "And Japan?"}]},
        {"role": "assistant", "content": "Tokyo"},
    ]


def test_sft_trains_every_assistant_turn_with_its_end_of_turn(tokenizer):
    sequence = data.sft_sequence(tokenizer, {"messages": conversation()})
    normalised = [data.normalise(m) for m in conversation()]
    assert tokenizer.decode(sequence.ids) == tokenizer.apply_chat_template(normalised, tokenize=False)
    assert trained_text(tokenizer, sequence) == "Paris<|im_end|>\nTokyo<|im_end|>\n"


def test_sft_last_trains_only_the_last_assistant_turn(tokenizer):
    sequence = data.sft_sequence(tokenizer, {"messages": conversation()}, assistant_turns="last")
    assert trained_text(tokenizer, sequence) == "Tokyo<|im_end|>\n"


def test_the_trained_tokens_follow_the_generation_prompt_as_a_sampler_sees_them(tokenizer):
    sequence = data.sft_sequence(tokenizer, {"messages": conversation()[:3]})
    prompt = tokenizer.apply_chat_template(conversation()[:2], tokenize=False, add_generation_prompt=True)
    prompt_ids = tokenizer.encode(prompt, add_special_tokens=False)
    assert sequence.ids[: len(prompt_ids)] == prompt_ids
    assert not any(sequence.mask[: len(prompt_ids)])
    assert all(sequence.mask[len(prompt_ids) :])


def test_tool_calls_are_tokenised_through_the_template(tokenizer):
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    example = {
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather"}}],
    }
    sequence = data.sft_sequence(tokenizer, example)
    assert "# Tools" in tokenizer.decode(sequence.ids)
    assert trained_text(tokenizer, sequence) == (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call><|im_end|>\n'
    )


def choice(content, logprobs=None):
    return {
        "finish_reason": "stop",
        "index": 0,
        "message": {"role": "assistant", "content": content},
        "logprobs": {"content": [{"token": "?", "logprob": v} for v in (logprobs or [])]},
    }


def test_trajectories_train_their_choices_and_keep_matching_sampler_logprobs(tokenizer):
    content_ids = tokenizer.encode("Paris", add_special_tokens=False)
    sampled = [-0.1 * (i + 1) for i in range(len(content_ids))]
    trajectory = {
        "messages_and_choices": [{"role": "user", "content": "Capital?"}, choice("Paris", sampled)],
        "reward": 1,
    }
    sequence = data.trajectory_sequence(tokenizer, trajectory)
    assert trained_text(tokenizer, sequence) == "Paris<|im_end|>\n"
    kept = [v for v in sequence.logprobs if not math.isnan(v)]
    assert kept == sampled
    # logprobs that do not match the tokens one to one are not used (recomputed instead)
    wrong = {"messages_and_choices": [{"role": "user", "content": "Capital?"}, choice("Paris", [-1.0] * 9)]}
    assert all(math.isnan(v) for v in data.trajectory_sequence(tokenizer, wrong).logprobs)


def test_without_logprobs_allowed_a_choice_without_logprobs_is_not_trained(tokenizer):
    trajectory = {"messages_and_choices": [{"role": "user", "content": "Capital?"}, choice("Paris")]}
    assert data.trajectory_sequence(tokenizer, trajectory).trainable_tokens > 0
    assert data.trajectory_sequence(tokenizer, trajectory, require_logprobs=True).trainable_tokens == 0


def test_sampled_token_ids_are_trained_as_sampled_even_when_their_text_encodes_differently(tokenizer):
    # byte tokens that are no valid UTF-8 alone: their decoded text no longer encodes to the same tokens
    sampled_ids = [tokenizer.convert_tokens_to_ids("Ã"), tokenizer.convert_tokens_to_ids("Ä")]
    text = tokenizer.decode(sampled_ids)
    entries = [{"token": f"token_id:{t}", "logprob": -0.5 - i} for i, t in enumerate(sampled_ids)]
    item = {"finish_reason": "stop", "index": 0, "message": {"role": "assistant", "content": text}}
    trajectory = {
        "messages_and_choices": [{"role": "user", "content": "?"}, {**item, "logprobs": {"content": entries}}]
    }
    sequence = data.trajectory_sequence(tokenizer, trajectory)
    trained = [t for t, m in zip(sequence.ids, sequence.mask, strict=True) if m]
    assert trained[:2] == sampled_ids
    assert [v for v in sequence.logprobs if not math.isnan(v)] == [-0.5, -1.5]
