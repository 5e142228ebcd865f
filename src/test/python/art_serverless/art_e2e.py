"""OpenPipe ART's `ServerlessBackend` (openpipe-art from PyPI), unchanged, against Fulcrum.

The backend's own settings point it at Fulcrum: `ServerlessBackend(base_url=ART_BASE_URL)` for `/v1/preview/...` and
the inference client, `WANDB_API_KEY` (its key for both) and `WANDB_BASE_URL` for the `wandb` SDK it uses beside them.
In ART's order: register a model of BASE_MODEL, rollouts through `model.openai_client()` with logprobs, two RL steps
(`backend.train`, which creates the job and follows its events to `training_ended`), the checkpoints listed, SFT with
`art.utils.sft.train_sft_from_file` (the backend uploads `train.jsonl` as a `wandb` artifact itself), the newest
checkpoint pulled through `wandb.Api().artifact(...).download()`, the model deleted. Prints `RESULT {json}`. ART keeps
its local state under `.art` of the working directory: the script works in a temporary directory.
"""

import asyncio
import hashlib
import json
import os
import tempfile

import art
from art.serverless.backend import ServerlessBackend
from art.utils.sft import train_sft_from_file

PROMPTS = ["Say something.", "Name an animal.", "Write a word."]


def reward(text):
    """Any score that varies between answers: the share of distinct characters."""
    return len(set(text)) / (1 + len(text))


async def rollout(model, client, prompt):
    messages = [{"role": "user", "content": prompt}]
    completion = await client.chat.completions.create(
        model=model.get_inference_name(),
        messages=messages,
        max_tokens=8,
        temperature=1.0,
        logprobs=True,
        top_logprobs=2,
    )
    choice = completion.choices[0]
    # A sampled policy may end its turn at once, or write only tokens that print nothing (control tokens, which are
    # reported with an empty text): any answer with text has tokens.
    assert choice.logprobs is not None, choice
    assert bool(choice.logprobs.content) or not choice.message.content, choice
    assert all(len(token.top_logprobs) == 2 for token in choice.logprobs.content), choice
    return art.Trajectory(messages_and_choices=[*messages, choice], reward=reward(choice.message.content or ""))


async def main():
    os.chdir(tempfile.mkdtemp())
    entity, project, name = os.environ["ENTITY"], os.environ["PROJECT"], os.environ["MODEL"]
    backend = ServerlessBackend(base_url=os.environ["ART_BASE_URL"])
    model = art.TrainableModel(name=name, project=project, entity=entity, base_model=os.environ["BASE_MODEL"])
    await model.register(backend)
    result = {"model_id": model.id, "run_id": model.run_id, "inference_name": model.get_inference_name()}

    client = model.openai_client()
    steps = []
    for _ in range(2):
        groups = [art.TrajectoryGroup([await rollout(model, client, prompt) for _ in range(4)]) for prompt in PROMPTS]
        tokens = sum(len(t.messages_and_choices[-1].logprobs.content) for g in groups for t in g.trajectories)
        await model.log(groups, split="train")
        trained = await backend.train(model, groups, learning_rate=1e-2)
        steps.append(
            {"tokens": tokens, "step": trained.step, "artifact": trained.artifact_name, "metrics": trained.metrics}
        )
    result["rl"] = steps

    checkpoints = []
    async for checkpoint in backend._client.models.checkpoints.list(model_id=model.id, order="asc"):
        checkpoints.append(checkpoint.step)
    result["checkpoints_after_rl"] = checkpoints

    data = os.path.join(tempfile.mkdtemp(), "train.jsonl")
    with open(data, "w") as f:
        for prompt, answer in [("Say hello.", "hello"), ("Say bye.", "bye"), ("Say yes.", "yes"), ("Say no.", "no")]:
            f.write(
                json.dumps(
                    {"messages": [{"role": "user", "content": prompt}, {"role": "assistant", "content": answer}]}
                )
                + "\n"
            )
    await train_sft_from_file(model, data, epochs=1, batch_size=2, peak_lr=1e-2)
    result["step_after_sft"] = await model.get_step()

    pulled = await backend._experimental_pull_model_checkpoint(
        model, step=result["step_after_sft"], local_path=tempfile.mkdtemp()
    )
    files = {}
    for directory, _, names in os.walk(pulled):
        for file in names:
            path = os.path.join(directory, file)
            with open(path, "rb") as f:
                files[os.path.relpath(path, pulled)] = hashlib.sha256(f.read()).hexdigest()
    result["pulled"] = files

    await backend.delete(model)
    print("RESULT " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    asyncio.run(main())
