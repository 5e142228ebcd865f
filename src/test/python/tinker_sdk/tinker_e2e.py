"""The `tinker` SDK 0.18.2 from PyPI, unchanged, against Fulcrum's Tinker API (run by TinkerSdkTest).

Environment: FULCRUM_URL, FULCRUM_KEY (a Fulcrum API key; the SDK gets "tml-" + it), TINKER_PROJECT, BASE_MODEL (a
catalog base model trained by fulcrum-worker), GGUF (its file: the tokenizer comes from it, not from the Hub).
PHASE `train` (the default): a training client, its steps, saves, samples, an RL loop and the REST listings; it saves
a training state and takes one more step after it (the reference). PHASE `resume` (STATE_PATH, REFERENCE: what
`train` printed): a new training client from that state with its optimizer takes the same step, and one loaded
without the optimizer a fresh one. Prints one line `RESULT {json}`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import tinker
from gguf import GGUFReader
from tinker import types
from tokenizers import Tokenizer, decoders, models, pre_tokenizers

FACTS = [
    "The capital of Zorbia is Quillon.",
    "The moon of Pelagia is named Ombrel.",
    "Grindle cheese is aged in Vostok caves.",
]


def cli_download(path: str) -> dict:
    """`tinker checkpoint download` (the SDK's CLI) of saved weights: what it printed and the files it unpacked."""
    with tempfile.TemporaryDirectory() as out:
        env = {
            **os.environ,
            "TINKER_BASE_URL": os.environ["FULCRUM_URL"].rstrip("/") + "/tinker",
            "TINKER_API_KEY": "tml-" + os.environ["FULCRUM_KEY"],
        }
        command = [sys.executable, "-m", "tinker.cli", "--format", "json", "checkpoint", "download", path, "-o", out]
        run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            return {"exit": run.returncode, "output": run.stdout + run.stderr}
        files = {
            str(f.relative_to(out)).split("/", 1)[1]: f.stat().st_size for f in Path(out).rglob("*") if f.is_file()
        }
        return {"exit": 0, "printed": json.loads(run.stdout), "files": files}


def gguf_tokenizer(path: str) -> Tokenizer:
    """SmolLM2's byte-level BPE from the GGUF's vocabulary and merges (its `smollm` pre-tokenizer: single digits,
    then GPT-2's byte-level split)."""
    reader = GGUFReader(path)

    def strings(name: str) -> list[str]:
        field = reader.fields[name]
        return [bytes(field.parts[i]).decode("utf-8") for i in field.data]

    vocab = {token: i for i, token in enumerate(strings("tokenizer.ggml.tokens"))}
    merges = [tuple(m.split(" ", 1)) for m in strings("tokenizer.ggml.merges")]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.ByteLevel(add_prefix_space=False)]
    )
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def datum(tokens: list[int]) -> types.Datum:
    """Next-token prediction over the whole sentence: position i predicts token i + 1."""
    return types.Datum(
        model_input=types.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={"target_tokens": tokens[1:], "weights": [1.0] * (len(tokens) - 1)},
    )


ADAM = types.AdamParams(learning_rate=4e-3, beta1=0.9, beta2=0.95, eps=1e-8)


def next_step(training: tinker.TrainingClient, data: list[types.Datum]) -> dict:
    """One cross-entropy step and the loss after it: what a saved-and-loaded state must repeat exactly."""
    backward = training.forward_backward(data, "cross_entropy")
    step = training.optim_step(ADAM)
    after = training.forward(data, "cross_entropy")
    metrics = step.result().metrics
    return {
        "loss": backward.result().metrics["loss:sum"],
        "grad_norm": metrics["grad_norm"],
        "step": metrics["step"],
        "loss_after": after.result().metrics["loss:sum"],
    }


def trained_sampler_tokens(service, path: str, prompt: types.ModelInput, params: types.SamplingParams) -> list[int]:
    return service.create_sampling_client(model_path=path).sample(prompt, 1, params).result().sequences[0].tokens


def rl_step(service, training, tokenizer, prompt: list[int], step: int) -> dict:
    """One step of RL: samples of the current weights (saved for the sampler), a toy reward (the completion's length
    in characters), group advantages, and an importance-sampling step on the sampled tokens with the sampler's
    logprobs."""
    path = training.save_weights_for_sampler(f"rl-{step}").result().path
    sampler = service.create_sampling_client(model_path=path)
    params = types.SamplingParams(max_tokens=6, temperature=1.0, seed=20 + step)
    sequences = sampler.sample(types.ModelInput.from_ints(prompt), 4, params).result().sequences
    rewards = [float(len(tokenizer.decode(s.tokens))) for s in sequences]
    mean = sum(rewards) / len(rewards)
    data = []
    for sequence, reward in zip(sequences, rewards, strict=True):
        tokens = prompt + sequence.tokens
        pad = [0.0] * (len(prompt) - 1)
        data.append(
            types.Datum(
                model_input=types.ModelInput.from_ints(tokens[:-1]),
                loss_fn_inputs={
                    "target_tokens": tokens[1:],
                    "logprobs": pad + list(sequence.logprobs),
                    "advantages": pad + [reward - mean] * len(sequence.tokens),
                },
            )
        )
    output = training.forward_backward(data, "importance_sampling").result()
    metrics = training.optim_step(ADAM).result().metrics
    # the training logprobs of the sampled tokens against the sampler's (llama.cpp on the same quantized weights)
    gaps = [
        abs(lp - q)
        for out, sequence in zip(output.loss_fn_outputs, sequences, strict=True)
        for lp, q in zip(out["logprobs"].data[len(prompt) - 1 :], sequence.logprobs, strict=True)
    ]
    return {
        "rewards": rewards,
        "loss": output.metrics["loss:sum"],
        "mean_logprob_gap": sum(gaps) / len(gaps),
        "max_logprob_gap": max(gaps),
        "step": metrics["step"],
    }


def resume(service: tinker.ServiceClient, data: list[types.Datum]) -> dict:
    """A new training client from the saved state with its optimizer takes the reference step; loaded without it,
    Adam starts again (step 1)."""
    path = os.environ["STATE_PATH"]
    result: dict = {
        "weights_info": service.create_rest_client().get_weights_info_by_tinker_path(path).result().model_dump()
    }
    training = service.create_training_client_from_state_with_optimizer(path)
    result["model_id"] = training.model_id
    result["with_optimizer"] = next_step(training, data)
    training.load_state(path).result()
    result["without_optimizer"] = next_step(training, data)
    return result


def main() -> None:
    base_model = os.environ["BASE_MODEL"]
    service = tinker.ServiceClient(
        base_url=os.environ["FULCRUM_URL"].rstrip("/") + "/tinker",
        api_key="tml-" + os.environ["FULCRUM_KEY"],
        project_id=os.environ["TINKER_PROJECT"],
    )
    tokenizer = gguf_tokenizer(os.environ["GGUF"])
    if os.environ.get("PHASE") == "resume":
        data = [datum(tokenizer.encode(fact).ids) for fact in FACTS]
        print("RESULT " + json.dumps(resume(service, data)), flush=True)
        return
    result: dict = {}
    capabilities = service.get_server_capabilities()
    result["supported_models"] = [m.model_name for m in capabilities.supported_models]

    # a base model Fulcrum does not train: refused at once, with the contract's 422
    try:
        service.create_lora_training_client(base_model="no-such-model", rank=4)
        result["unknown_base"] = "accepted"
    except tinker.UnprocessableEntityError as error:
        result["unknown_base"] = error.status_code

    sentences = [tokenizer.encode(fact).ids for fact in FACTS]
    assert all(tokenizer.decode(ids) == fact for ids, fact in zip(sentences, FACTS, strict=True))
    data = [datum(ids) for ids in sentences]

    started = time.monotonic()
    training = service.create_lora_training_client(
        base_model=base_model, rank=4, seed=7, train_mlp=True, train_attn=True, train_unembed=False
    )
    result["model_id"] = training.model_id
    result["create_seconds"] = round(time.monotonic() - started, 1)
    info = training.get_info()
    result["lora_rank"] = info.lora_rank

    losses = []
    adam = ADAM
    for _ in range(16):
        # submitted together: the server runs them in seq_id order
        backward = training.forward_backward(data, "cross_entropy")
        step = training.optim_step(adam)
        output = backward.result()
        losses.append(output.metrics["loss:sum"])
        step.result()
        if losses[-1] <= losses[0] / 2:
            break
    result["losses"] = losses
    result["logprobs_lengths"] = [len(out["logprobs"].data) for out in output.loss_fn_outputs]
    result["datum_lengths"] = [len(ids) - 1 for ids in sentences]
    result["elementwise_sums"] = [sum(out["elementwise_loss"].data) for out in output.loss_fn_outputs]

    # a forward of the trained weights: no gradient, the loss as it is now
    evaluated = training.forward(data, "cross_entropy").result()
    result["forward_loss"] = evaluated.metrics["loss:sum"]
    # an importance-sampling step on behaviour log-probabilities of the current weights (ratios of 1)
    rl = [
        types.Datum(
            model_input=d.model_input,
            loss_fn_inputs={
                "target_tokens": d.loss_fn_inputs["target_tokens"],
                "logprobs": out["logprobs"],
                "advantages": [1.0] * d.model_input.length,
            },
        )
        for d, out in zip(data, evaluated.loss_fn_outputs, strict=True)
    ]
    sampled = training.forward_backward(rl, "importance_sampling").result()
    result["importance_sampling_ratio"] = sampled.metrics["ratio:mean"]
    result["importance_sampling_loss"] = sampled.metrics["loss:sum"]
    result["optim_metrics"] = training.optim_step(adam).result().metrics

    # the weights for sampling: a checkpoint of the model's Fulcrum training model, sampled by llama.cpp
    path = training.save_weights_for_sampler("facts").result().path
    result["sampler_path"] = path
    prompt = types.ModelInput.from_ints(tokenizer.encode("The capital of Zorbia is").ids)
    greedy = types.SamplingParams(max_tokens=12, temperature=0.0, stop=["."])
    trained = service.create_sampling_client(model_path=path).sample(prompt, 1, greedy).result()
    sequence = trained.sequences[0]
    result["trained_answer"] = tokenizer.decode(sequence.tokens)
    result["trained_stop_reason"] = sequence.stop_reason
    result["trained_logprobs"] = len(sequence.logprobs or []) == len(sequence.tokens)
    # top_k 1 at temperature 1 draws the likeliest token: the greedy answer
    top1 = types.SamplingParams(max_tokens=12, temperature=1.0, top_k=1, seed=9, stop=["."])
    result["top_k_1_is_greedy"] = trained_sampler_tokens(service, path, prompt, top1) == sequence.tokens
    base = service.create_sampling_client(base_model=base_model)
    result["base_answer"] = tokenizer.decode(base.sample(prompt, 1, greedy).result().sequences[0].tokens)
    # two samples at temperature 1, their logprobs and the prompt's
    drawn = base.sample(
        prompt, 2, types.SamplingParams(max_tokens=5, temperature=1.0, seed=3), include_prompt_logprobs=True
    ).result()
    result["drawn"] = [
        {"tokens": len(s.tokens), "logprobs": len(s.logprobs or []), "stop_reason": s.stop_reason}
        for s in drawn.sequences
    ]
    result["prompt_logprobs"] = drawn.prompt_logprobs

    # the training state (adapter and Adam's moments), then the step after it: the reference a resumed client repeats
    result["state_path"] = training.save_state("resume").result().path
    result["reference"] = next_step(training, data)
    # a short RL loop on the current weights' samples
    story = tokenizer.encode("Once upon a time").ids
    result["rl"] = [rl_step(service, training, tokenizer, story, step) for step in range(2)]

    # the REST client's listings
    rest = service.create_rest_client()
    runs = rest.list_training_runs().result()
    result["runs"] = [r.training_run_id for r in runs.training_runs]
    run = rest.get_training_run(training.model_id).result()
    result["run"] = {
        "base_model": run.base_model,
        "lora_rank": run.lora_rank,
        "last_checkpoint": run.last_checkpoint.checkpoint_id if run.last_checkpoint else None,
        "last_sampler_checkpoint": run.last_sampler_checkpoint.checkpoint_id if run.last_sampler_checkpoint else None,
        "last_checkpoint_size": run.last_checkpoint.size_bytes if run.last_checkpoint else None,
    }
    listed = rest.list_checkpoints(training.model_id).result().checkpoints
    result["checkpoints"] = [c.checkpoint_id for c in listed]
    result["checkpoint_sizes"] = {c.checkpoint_id: c.size_bytes for c in listed}
    archive = rest.get_checkpoint_archive_url(training.model_id, "sampler_weights/facts").result()
    expires = archive.expires if archive.expires.tzinfo else archive.expires.replace(tzinfo=UTC)  # the Expires header
    result["archive_url"] = {"url": archive.url, "seconds_left": (expires - datetime.now(UTC)).total_seconds()}
    deleted = f"tinker://{training.model_id}/sampler_weights/rl-0"
    kept = service.create_sampling_client(model_path=deleted)
    rest.delete_checkpoint(training.model_id, "sampler_weights/rl-0").result()
    # a sampling client made before the delete no longer samples them; a new one cannot be made
    try:
        kept.sample(prompt, 1, greedy).result()
        result["deleted_sampling"] = "sampled"
    except tinker.RequestFailedError as error:
        result["deleted_sampling"] = str(error)
    try:
        service.create_sampling_client(model_path=deleted)
        result["deleted_new_client"] = "created"
    except tinker.NotFoundError as error:
        result["deleted_new_client"] = error.status_code
    result["after_delete"] = [c.checkpoint_id for c in rest.list_checkpoints(training.model_id).result().checkpoints]
    user_checkpoints = rest.list_user_checkpoints().result().checkpoints
    result["user_checkpoints"] = [c.tinker_path for c in user_checkpoints]
    result["user_checkpoint_sizes"] = {c.tinker_path: c.size_bytes for c in user_checkpoints}
    result["sampler_base"] = base.get_base_model()
    trained_sampler = rest.get_sampler(service.create_sampling_client(model_path=path)._sampling_session_id).result()
    result["sampler"] = trained_sampler.model_dump()
    sessions = rest.list_sessions().result().sessions
    result["sessions"] = len(sessions)
    result["session_runs"] = rest.get_session(sessions[0]).result().training_run_ids
    # the CLI makes a session of its own (so after the sessions were read)
    result["downloaded"] = cli_download(f"tinker://{training.model_id}/weights/resume")
    rest.delete_checkpoint_from_tinker_path(f"tinker://{training.model_id}/sampler_weights/rl-1").result()
    result["after_path_delete"] = [
        c.checkpoint_id for c in rest.list_checkpoints(training.model_id).result().checkpoints
    ]
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
