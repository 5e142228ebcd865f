"""OpenPipe ART 0.5.18's TinkerNativeBackend, unchanged, trains SmolLM2 through Fulcrum's Tinker API.

Run by bench/art-tinker-native.sh.

The backend talks to Fulcrum through the `tinker` SDK 0.18.2 (TINKER_BASE_URL, TINKER_API_KEY); it loads its
tokenizer by the base model's name from the Hugging Face Hub (tinker-cookbook's `tokenizer_utils.get_tokenizer`, i.e.
`AutoTokenizer.from_pretrained(BASE_MODEL)`), here the stand-in of bench/art_tinker_hub.py (HF_ENDPOINT). Its
renderer (prompt tokens, stop tokens, parsing) is named by the model's `tinker_native_args.renderer_name`: ART knows
no renderer for SmolLM2, so this script registers one with tinker-cookbook's public `renderers.register_renderer`
(ChatML, the format of SmolLM2's chat template, which it checks against the template from the Hub).

PHASE `train`: RL steps (rollouts through the backend's own OpenAI server, whose completions are Fulcrum's Tinker
sampler on the step's sampler weights; rewards; `backend.train`, the loss `cispo` by default), the last step also
saving the training state; then the trained weights answer through the backend's server and through Fulcrum's
`/v1/chat/completions` (the saved weights are a checkpoint of a Fulcrum training model). PHASE `resume`: a new backend
registers the same model (ART's state in ART_PATH) and continues from the saved state with its optimizer (ART's
`list_checkpoints` and `load_state_with_optimizer`), one more step. Prints one line `RESULT {json}`.

Environment: TINKER_BASE_URL, TINKER_API_KEY, HF_ENDPOINT, HF_HOME, FULCRUM_URL, FULCRUM_KEY, ENTITY, BASE_MODEL,
ART_PATH, STEPS, LEARNING_RATE, GROUP_SIZE, MAX_TOKENS, PHASE.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
import urllib.request

import art
import tinker
from art.tinker_native import TinkerNativeBackend
from tinker_cookbook import renderers, tokenizer_utils
from tinker_cookbook.renderers.qwen3 import Qwen3InstructRenderer

BASE_MODEL = os.environ["BASE_MODEL"]
RENDERER = "fulcrum/smollm2-chatml"
SYSTEM = "You are a helpful AI assistant named SmolLM, trained by Hugging Face"
QUESTIONS = {
    "What color is the sky on a clear day? Answer with one word.": "blue",
    "What is the opposite of hot? Answer with one word.": "cold",
    "Which animal says meow? Answer with one word.": "cat",
}
STEPS = int(os.environ.get("STEPS", "3"))
LEARNING_RATE = float(os.environ.get("LEARNING_RATE", "1e-3"))
GROUP_SIZE = int(os.environ.get("GROUP_SIZE", "4"))
MAX_TOKENS = int(os.environ.get("MAX_TOKENS", "16"))


def chatml_renderer(tokenizer, image_processor=None):
    """SmolLM2's chat format is ChatML (`<|im_start|>role\\n...<|im_end|>\\n`, stop at `<|im_end|>`), which
    tinker-cookbook's Qwen3 instruct renderer writes and parses (without thinking blocks)."""
    return Qwen3InstructRenderer(tokenizer)


def reward(text: str, right: str) -> float:
    """Half for answering as asked (0.5 for one word, 0.5/n for n words), half for the right word in it."""
    words = [w.lower() for w in re.findall(r"[A-Za-z']+", text)]
    if not words:
        return 0.0
    return 0.5 / len(words) + (0.5 if right in words else 0.0)


def messages(question: str) -> list[dict]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}]


async def rollout(client, model: art.TrainableModel, question: str) -> art.Trajectory:
    completion = await client.chat.completions.create(
        model=model.get_inference_name(), messages=messages(question), max_tokens=MAX_TOKENS, temperature=1.0
    )
    choice = completion.choices[0]
    return art.Trajectory(
        messages_and_choices=[*messages(question), choice],
        reward=reward(choice.message.content or "", QUESTIONS[question]),
        metrics={"words": len((choice.message.content or "").split())},
    )


async def rl_step(backend, model: art.TrainableModel, save_checkpoint: bool) -> dict:
    client = model.openai_client()
    started = time.monotonic()
    groups = await asyncio.gather(
        *[
            art.gather_trajectory_groups(
                [art.TrajectoryGroup(rollout(client, model, q) for _ in range(GROUP_SIZE))], pbar_desc=None
            )
            for q in QUESTIONS
        ]
    )
    groups = [g for gathered in groups for g in gathered]
    rollout_seconds = time.monotonic() - started
    rewards = [t.reward for g in groups for t in g.trajectories]
    answers = [t.messages_and_choices[-1].message.content for t in groups[0].trajectories]
    started = time.monotonic()
    result = await backend.train(model, groups, learning_rate=LEARNING_RATE, save_checkpoint=save_checkpoint)
    metrics = result.metrics
    return {
        "step": result.step,
        "reward_mean": sum(rewards) / len(rewards),
        # the forward_backward's and optim_step's metrics as Fulcrum answers them (Tinker's names; ART passes on
        # names it does not know: `loss:sum`)
        "loss": metrics.get("loss:sum"),
        "ratio": metrics.get("ratio:mean"),
        "clip_fraction": metrics.get("clip_fraction:mean"),
        "grad_norm": metrics.get("loss/grad_norm"),
        "learning_rate": metrics.get("loss/learning_rate"),
        "datums": metrics.get("data/step_num_datums"),
        "trainer_tokens": metrics.get("data/step_trainer_tokens"),
        "rollout_s": round(rollout_seconds, 1),
        "train_s": round(time.monotonic() - started, 1),
        "answers_q0": answers,
    }


def fulcrum(method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        os.environ["FULCRUM_URL"].rstrip("/") + path,
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Authorization": "Bearer " + os.environ["FULCRUM_KEY"], "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=300) as answer:
        return json.loads(answer.read())


def greedy_through_fulcrum(served_model: str, question: str) -> dict:
    """Fulcrum's OpenAI-compatible chat: SmolLM2's chat template, llama.cpp with the checkpoint's adapter."""
    answer = fulcrum(
        "POST",
        "/v1/chat/completions",
        {
            "model": served_model,
            "messages": messages(question),
            "temperature": 0,
            "max_tokens": MAX_TOKENS,
            "logprobs": True,
        },
    )
    choice = answer["choices"][0]
    return {
        "text": choice["message"]["content"],
        "logprobs": [round(c["logprob"], 4) for c in choice["logprobs"]["content"]],
    }


async def greedy_through_art(model: art.TrainableModel, question: str) -> dict:
    """The backend's own OpenAI server: the renderer's prompt, Fulcrum's Tinker sampler on the step's weights."""
    completion = await model.openai_client().chat.completions.create(
        model=model.get_inference_name(), messages=messages(question), max_tokens=MAX_TOKENS, temperature=0
    )
    choice = completion.choices[0]
    return {
        "text": choice.message.content,
        "logprobs": [round(c.logprob, 4) for c in choice.logprobs.content],
        "finish_reason": choice.finish_reason,
    }


def served_model_of(run_id: str) -> str:
    """The Fulcrum training model of a Tinker training run (its id with ':' written '-') and its newest checkpoint."""
    name = run_id.replace(":", "-")
    models = fulcrum("GET", f"/v1/preview/models?entity={os.environ['ENTITY']}&project=tinker")["data"]
    model_id = next(m["id"] for m in models if m["name"] == name)
    checkpoints = fulcrum("GET", f"/v1/preview/models/{model_id}/checkpoints")["data"]
    newest = max(checkpoints, key=lambda c: c["step"])
    return newest["artifact"]


def renderer_check(tokenizer) -> dict:
    """The registered renderer's prompt against SmolLM2's own chat template (from the Hub's tokenizer_config)."""
    renderer = renderers.get_renderer(RENDERER, tokenizer, model_name=BASE_MODEL)
    question = next(iter(QUESTIONS))
    rendered = renderer.build_generation_prompt(messages(question)).to_ints()
    templated = tokenizer.apply_chat_template(messages(question), add_generation_prompt=True, tokenize=True)
    if isinstance(templated, dict) or hasattr(templated, "input_ids"):
        templated = templated["input_ids"]
    return {
        "prompt_tokens": len(rendered),
        "equals_chat_template": list(rendered) == list(templated),
        "stop_sequences": renderer.get_stop_sequences(),
        "im_end": tokenizer.convert_tokens_to_ids("<|im_end|>"),
    }


def trainable_model() -> art.TrainableModel:
    return art.TrainableModel(
        name="one-word",
        project="art-tinker-native",
        base_model=BASE_MODEL,
        _internal_config=art.dev.InternalModelConfig(
            tinker_native_args=art.dev.TinkerNativeArgs(
                renderer_name=RENDERER, training_client_args={"rank": 8, "seed": 7, "train_unembed": False}
            )
        ),
    )


async def main() -> None:
    renderers.register_renderer(RENDERER, chatml_renderer)
    result: dict = {"phase": os.environ.get("PHASE", "train")}
    started = time.monotonic()
    # the tokenizer by the base model's name, as the backend loads it (through HF_ENDPOINT)
    tokenizer = tokenizer_utils.get_tokenizer(BASE_MODEL)
    result["tokenizer"] = {"class": type(tokenizer).__name__, "vocab": len(tokenizer)}
    result["renderer"] = renderer_check(tokenizer)

    backend = TinkerNativeBackend(path=os.environ["ART_PATH"])
    model = trainable_model()
    await model.register(backend, _openai_client_config={"server_args": {"host": "127.0.0.1"}})
    state = backend._model_state[model.name]
    result["register_s"] = round(time.monotonic() - started, 1)
    result["step_after_register"] = await model.get_step()
    result["tinker_run_ids"] = state.tinker_run_ids
    question = next(iter(QUESTIONS))

    if result["phase"] == "train":
        result["base"] = greedy_through_fulcrum(BASE_MODEL, question)
        result["step0_through_art"] = await greedy_through_art(model, question)
        result["rl"] = []
        for i in range(STEPS):
            step = await rl_step(backend, model, save_checkpoint=i == STEPS - 1)
            print("STEP " + json.dumps(step), flush=True)
            result["rl"].append(step)
    else:
        step = await rl_step(backend, model, save_checkpoint=False)
        print("STEP " + json.dumps(step), flush=True)
        result["rl"] = [step]

    # the trained weights, served: by the backend's server (Fulcrum's Tinker sampler) and by Fulcrum's chat API
    run_id = state.training_client.model_id
    result["trained_through_art"] = await greedy_through_art(model, question)
    result["served_model"] = served_model_of(run_id)
    result["trained_through_fulcrum"] = greedy_through_fulcrum(result["served_model"], question)
    rest = tinker.ServiceClient().create_rest_client()
    listed = (await rest.list_checkpoints_async(run_id)).checkpoints
    result["checkpoints"] = [f"{c.checkpoint_type}:{c.checkpoint_id}" for c in listed]
    result["art_state"] = model.read_state()
    result["seconds"] = round(time.monotonic() - started, 1)
    await backend.close()
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
