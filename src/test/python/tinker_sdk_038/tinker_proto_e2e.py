"""The newest `tinker` SDK (0.38.0) from PyPI, unchanged, against Fulcrum's Tinker API (run by TinkerSdkTest).

This release sends `forward_backward` (and `forward`, as a forward-only `forward_backward`) as protobuf, zstd-compressed
since Fulcrum's `client/config` asks for it, and reads the results of `forward`, `forward_backward` and `sample` only as
protobuf. Environment: FULCRUM_URL, FULCRUM_KEY (the SDK gets "tml-" + it), TINKER_PROJECT, BASE_MODEL, GGUF (the
tokenizer comes from it). A LoRA training client takes a forward, cross-entropy steps and a forward again, saves its
weights for the sampler, and a sampling client of them samples with logprobs (of the prompt, and the top-k of the
prompt's and of the sampled positions); the RestClient copies those weights into another project of the user
(FULCRUM_ENTITY) and a sampling client of the copy draws the same seeded sample; the first sampling client then scores
only the prompt's last positions with chosen target tokens (`prompt_logprobs_last_n`, `target_prompt_logprobs`).
Prints one line `RESULT {json}`.
"""

from __future__ import annotations

import json
import math
import os
import sys
from datetime import UTC, datetime

import numpy as np
import tinker
from tinker import types

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tinker_sdk"))
from tinker_e2e import ADAM, FACTS, datum, gguf_tokenizer  # noqa: E402  (the 0.18.2 script's helpers)


def main() -> None:
    service = tinker.ServiceClient(
        base_url=os.environ["FULCRUM_URL"].rstrip("/") + "/tinker",
        api_key="tml-" + os.environ["FULCRUM_KEY"],
        project_id=os.environ["TINKER_PROJECT"],
    )
    tokenizer = gguf_tokenizer(os.environ["GGUF"])
    facts = [tokenizer.encode(fact).ids for fact in FACTS]
    data = [datum(tokens) for tokens in facts]
    result: dict = {"sdk": tinker.__version__, "facts": facts, "datum_lengths": [len(t) - 1 for t in facts]}

    # client-creation methods answer futures of the clients in this release
    training = service.create_lora_training_client(
        base_model=os.environ["BASE_MODEL"], rank=4, train_unembed=False
    ).result()
    result["model_id"] = training.model_id
    # a forward (protobuf both ways): the base's per-token logprobs and losses
    before = training.forward(data, "cross_entropy").result()
    result["forward_loss"] = before.metrics["loss:sum"]
    result["forward_logprobs"] = [out["logprobs"].tolist() for out in before.loss_fn_outputs]
    result["forward_elementwise"] = [out["elementwise_loss"].tolist() for out in before.loss_fn_outputs]
    losses = []
    for _ in range(3):
        backward = training.forward_backward(data, "cross_entropy")
        step = training.optim_step(ADAM)
        output = backward.result()
        losses.append(output.metrics["loss:sum"])
        result["optim_step"] = step.result().metrics["step"]
    result["losses"] = losses
    result["backward_logprobs_lengths"] = [len(out["logprobs"].tolist()) for out in output.loss_fn_outputs]
    after = training.forward(data, "cross_entropy").result()
    result["after_loss"] = after.metrics["loss:sum"]
    result["after_logprobs"] = [out["logprobs"].tolist() for out in after.loss_fn_outputs]
    result["after_dtype"] = after.loss_fn_outputs[0]["logprobs"].dtype

    path = training.save_weights_for_sampler("proto").result().path
    result["sampler_path"] = path
    sampler = service.create_sampling_client(model_path=path).result()
    result["sampling_session_id"] = sampler._sampling_session_id
    prompt = tokenizer.encode("The capital of Zorbia is").ids
    result["prompt"] = prompt
    params = types.SamplingParams(max_tokens=6, temperature=1.0, seed=7)
    answer = sampler.sample(
        types.ModelInput.from_ints(prompt),
        2,
        params,
        include_prompt_logprobs=True,
        topk_prompt_logprobs=3,
        topk_sample_logprobs=4,
    ).result()
    result["samples"] = [
        {
            "tokens": list(s.tokens),
            "logprobs": list(s.logprobs or []),
            "stop_reason": s.stop_reason,
            "sequence_id": s.sequence_id,
            # the SDK's own types: a TopkLogprobs of (tokens, k) matrices, and its lists of (token, logprob)
            "topk_type": type(s.topk_logprobs_np).__name__,
            "topk_shape": None if s.topk_logprobs_np is None else list(s.topk_logprobs_np.token_ids.shape),
            "topk_logprobs": [
                None if top is None else [[int(token), float(logprob)] for token, logprob in top]
                for top in s.topk_logprobs or []
            ],
        }
        for s in answer.sequences
    ]
    result["prompt_logprobs"] = [None if v is None or math.isnan(v) else v for v in answer.prompt_logprobs or []]
    result["topk_prompt_logprobs"] = [
        None if top is None else [[int(token), float(logprob)] for token, logprob in top]
        for top in answer.topk_prompt_logprobs or []
    ]
    # copy_weights (answered at once, the SDK's future of its path): the copy samples as its source does
    rest = service.create_rest_client()
    copy = rest.copy_weights(path, os.environ["FULCRUM_ENTITY"] + "/proto-copies").result()
    result["copy_path"] = copy
    copied = service.create_sampling_client(model_path=copy).result()
    again = copied.sample(types.ModelInput.from_ints(prompt), 1, params).result()
    result["copy_tokens"] = list(again.sequences[0].tokens)
    # a time to live on the copy (an hour, read back as expires_at), then none again
    rest.set_checkpoint_ttl_from_tinker_path(copy, 3600).result()
    run_id = copy.removeprefix("tinker://").split("/", 1)[0]
    expires = rest.list_checkpoints(run_id).result().checkpoints[0].expires_at
    result["copy_ttl_seconds"] = (expires - datetime.now(UTC)).total_seconds() if expires else None
    rest.set_checkpoint_ttl_from_tinker_path(copy, None).result()
    result["copy_expires_after_none"] = rest.list_checkpoints(run_id).result().checkpoints[0].expires_at
    result["last_n"] = last_n_and_targets(sampler, prompt, result["topk_prompt_logprobs"])
    print("RESULT " + json.dumps(result), flush=True)


def last_n_and_targets(sampler, prompt: list[int], full_topk: list) -> dict:
    """A sample scoring only the last 3 prompt positions, with targets at the last 4 (read through the SDK's types).

    Row i of the targets asks at prompt position i + 1 for its own token, the likeliest other token of the full
    answer's top-k there, and nothing (-1); rows before the last 4 ask nothing.
    """
    n = 3
    first = len(prompt) - n - 1
    ids = np.full((len(prompt) - 1, 3), -1, dtype=np.int64)
    for position in range(first, len(prompt)):
        ids[position - 1, 0] = prompt[position]
        ids[position - 1, 1] = next(t for t, _ in full_topk[position] if t != prompt[position])
    answer = sampler.sample(
        types.ModelInput.from_ints(prompt),
        1,
        types.SamplingParams(max_tokens=1, temperature=0.0),
        include_prompt_logprobs=True,
        topk_prompt_logprobs=3,
        target_prompt_logprobs=types.TensorData.from_numpy(ids),
        prompt_logprobs_last_n=n,
    ).result()
    target = answer.target_prompt_logprobs
    return {
        "n": n,
        "first_target": first,
        "targets": ids.tolist(),
        "prompt_logprobs": answer.prompt_logprobs,
        "topk_prompt_logprobs": [
            None if top is None else [[int(token), float(logprob)] for token, logprob in top]
            for top in answer.topk_prompt_logprobs or []
        ],
        "target_type": type(target).__name__,
        "target_dtype": target.dtype,
        "target_shape": list(target.shape),
        "target_logprobs": target.to_numpy().tolist(),
    }


if __name__ == "__main__":
    main()
