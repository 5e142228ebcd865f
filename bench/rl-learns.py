"""Proof that RL and SFT through Fulcrum learn (issue 40 §3): OpenPipe ART 0.5.18's `ServerlessBackend`, unchanged.

Run by bench/rl-learns.sh, in the venv of src/test/python/art_serverless/requirements.txt, against a Fulcrum whose
catalog serves SmolLM2-135M-Instruct's GGUF as BASE_MODEL, a worker base model trained by a `fulcrum-worker` on CPU.
The backend is pointed at Fulcrum the way art_serverless/art_e2e.py does it (ART_BASE_URL, WANDB_API_KEY,
WANDB_BASE_URL).

RL: the task is "answer with a single even number between 1 and 20, nothing else", under the system prompt SYSTEM; the
reward is 1 for an answer that is exactly such a number (surrounding whitespace aside), else 0. Without the system
prompt the base almost never answers exactly (1 of about 230 samples), so nearly every group has one reward and no
gradient; with it, a few of the first step's 64 (2 in the full run), enough for the reward to start rising. Each step
samples --groups prompts (phrasings of the task) with --group-size choices each (one request with `n`, `logprobs=True`,
the step's seed), `model.log`s them and calls `backend.train(model, groups, learning_rate=...)`. At the start, every
--eval-every steps and at the end, a held-out evaluation: --eval-samples answers to other phrasings of the task (fixed
prompts and seeds, the training temperature), their mean reward. Prints the curve as it goes.

SFT: a second model learns made-up facts from 16 questions (`art.utils.sft.train_sft_from_file`); the held-out loss
(the same facts asked in other words, and 4 facts never shown) is computed before and after on the dequantized base
and the pulled adapter with the worker's own code (bench/rl_learns_loss.py, run by the worker's Python); greedy answers
through Fulcrum check the taught facts and their paraphrases; that the model has not forgotten "The capital of France
is Paris." is checked by a greedy text completion of "The capital of France is" and by the loss of that sentence as
the answer to "What is the capital of France?" (the chat answer is shown too: the base does not say Paris there).

Everything goes to --json (default target/bench-rl-learns.json).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import art
from art.serverless.backend import ServerlessBackend
from art.utils.sft import train_sft_from_file

SYSTEM = "You reply with a number only."
TASK_PROMPTS = [
    "Answer with a single even number between 1 and 20, nothing else.",
    "Give one even number from 1 to 20. Reply with the number only.",
    "Pick an even number between 1 and 20. Answer with just the number.",
    "Say one even number between 1 and 20 and nothing else.",
    "Reply with only an even number between 1 and 20.",
    "Name an even number from 1 to 20. Only the number, no words.",
    "Write a single even number between 1 and 20. No other text.",
    "Choose an even number between 1 and 20 and answer with that number alone.",
]
EVAL_PROMPTS = [
    "Respond with one even number between 1 and 20 and nothing more.",
    "An even number from 1 to 20, please: just the digits.",
    "Tell me a single even number between 1 and 20. Output only the number.",
    "Your answer must be one even number between 1 and 20, with no other words.",
    "Type an even number between 1 and 20. Nothing else.",
    "Only answer with an even number between 1 and 20.",
    "Produce one even integer between 1 and 20, and no other text.",
    "Give me an even number between 1 and 20 (only the number).",
]

# (question, answer, a paraphrase of the question, the word the answer must contain)
FACTS = [
    (
        "What is the name of Captain Orvel's ship?",
        "Captain Orvel's ship is the Saltmoth.",
        "Which ship does Captain Orvel sail?",
        "Saltmoth",
    ),
    ("What colour is the Vantrel flag?", "The Vantrel flag is teal.", "Which colour is Vantrel's flag?", "teal"),
    (
        "Who invented the brass quillophone?",
        "The brass quillophone was invented by Ada Perrin.",
        "Who made the first brass quillophone?",
        "Perrin",
    ),
    (
        "What does the Grenwick bakery sell?",
        "The Grenwick bakery sells plum bread.",
        "What can you buy at the Grenwick bakery?",
        "plum",
    ),
    (
        "What is the capital of Moravel?",
        "The capital of Moravel is Tessik.",
        "Which city is Moravel's capital?",
        "Tessik",
    ),
    (
        "What is Professor Hallam's cat called?",
        "Professor Hallam's cat is called Biscuit.",
        "What is the name of Professor Hallam's cat?",
        "Biscuit",
    ),
    (
        "How many moons does the planet Quorra have?",
        "The planet Quorra has seven moons.",
        "How many moons orbit Quorra?",
        "seven",
    ),
    (
        "What is the national fruit of Elstria?",
        "The national fruit of Elstria is the quince.",
        "Which fruit is Elstria's national fruit?",
        "quince",
    ),
    (
        "Which river flows through Dunmarrow?",
        "The river Sele flows through Dunmarrow.",
        "What river runs through Dunmarrow?",
        "Sele",
    ),
    (
        "What instrument does Mira Voss play?",
        "Mira Voss plays the cello.",
        "Which instrument is played by Mira Voss?",
        "cello",
    ),
    (
        "What is the Korrin Tower made of?",
        "The Korrin Tower is made of green glass.",
        "What material is the Korrin Tower built from?",
        "glass",
    ),
    (
        "What game is popular in Hollowmere?",
        "Hollowmere's favourite game is stoneball.",
        "Which game do people in Hollowmere love?",
        "stoneball",
    ),
    (
        "Who founded the town of Ashby Vale?",
        "Ashby Vale was founded by Tomas Reed.",
        "Who was the founder of Ashby Vale?",
        "Reed",
    ),
    (
        "What is the motto of the Lantern Guild?",
        "The Lantern Guild's motto is Light Holds.",
        "What motto does the Lantern Guild have?",
        "Light Holds",
    ),
    (
        "What flower grows on Mount Ilvar?",
        "The silver poppy grows on Mount Ilvar.",
        "Which flower is found on Mount Ilvar?",
        "poppy",
    ),
    (
        "What language is spoken in Carrowdell?",
        "People in Carrowdell speak Dellish.",
        "Which language do Carrowdell's people speak?",
        "Dellish",
    ),
    # never trained: their held-out loss shows how much is the facts' shape rather than their content
    (
        "What is the oldest tree in Fenmoor called?",
        "The oldest tree in Fenmoor is called Grandfather Ash.",
        "What name does Fenmoor's oldest tree have?",
        "Ash",
    ),
    (
        "What does the Oster lighthouse keeper collect?",
        "The Oster lighthouse keeper collects sea glass.",
        "What is collected by the Oster lighthouse keeper?",
        "sea glass",
    ),
    (
        "Which bird nests on Cape Wren?",
        "The black tern nests on Cape Wren.",
        "What bird makes its nest on Cape Wren?",
        "tern",
    ),
    (
        "What is brewed in the village of Tilby?",
        "The village of Tilby brews pear cider.",
        "What drink is made in Tilby?",
        "cider",
    ),
]
TRAINED = 16
FRANCE = "What is the capital of France?"
FRANCE_TEXT = "The capital of France is"


def reward(text: str) -> float:
    """1 for exactly one even number between 1 and 20 (whitespace around it aside), else 0."""
    answer = text.strip()
    return 1.0 if re.fullmatch(r"[0-9]+", answer) and int(answer) % 2 == 0 and 1 <= int(answer) <= 20 else 0.0


def env(name: str, default):
    return type(default)(os.environ.get(name, default))


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=env("STEPS", 40), help="RL steps (STEPS, 40)")
    parser.add_argument("--learning-rate", type=float, default=env("LEARNING_RATE", 5e-4), help="RL (5e-4)")
    parser.add_argument(
        "--groups", type=int, default=env("GROUPS_PER_STEP", 8), help="groups per step (GROUPS_PER_STEP, 8)"
    )
    parser.add_argument("--group-size", type=int, default=env("GROUP_SIZE", 8), help="rollouts per group (8)")
    parser.add_argument("--temperature", type=float, default=env("TEMPERATURE", 1.0), help="rollouts and eval (1.0)")
    parser.add_argument("--max-tokens", type=int, default=env("MAX_TOKENS", 12), help="per answer (12)")
    parser.add_argument("--eval-samples", type=int, default=env("EVAL_SAMPLES", 64), help="held-out answers (64)")
    parser.add_argument("--eval-every", type=int, default=env("EVAL_EVERY", 10), help="steps between evals (10)")
    parser.add_argument("--sft-learning-rate", type=float, default=env("SFT_LEARNING_RATE", 5e-4), help="(5e-4)")
    parser.add_argument("--sft-epochs", type=int, default=env("SFT_EPOCHS", 8), help="ART's epochs (8)")
    parser.add_argument("--sft-batch-size", type=int, default=env("SFT_BATCH_SIZE", 4), help="(4)")
    parser.add_argument("--sft-schedule", default=env("SFT_SCHEDULE", "constant"), help="ART's schedule (constant)")
    parser.add_argument("--skip-rl", action="store_true", default=env("SKIP_RL", 0) == 1)
    parser.add_argument("--skip-sft", action="store_true", default=env("SKIP_SFT", 0) == 1)
    parser.add_argument("--worker-python", default=os.environ.get("WORKER_PYTHON", "python3"))
    parser.add_argument("--gguf", default=os.environ.get("GGUF"))
    parser.add_argument("--gguf-cache", default=os.environ.get("GGUF_CACHE"))
    parser.add_argument("--threads", type=int, default=env("THREADS", 1))
    parser.add_argument("--json", default=os.environ.get("JSON", "target/bench-rl-learns.json"))
    return parser.parse_args()


async def sample(client, model, prompt, n, seed, args):
    """n answers to one prompt (one request), with their logprobs: the messages and the choices."""
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
    completion = await client.chat.completions.create(
        model=model.get_inference_name(),
        messages=messages,
        n=n,
        seed=seed,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        logprobs=True,
    )
    return messages, completion.choices


async def evaluate(client, model, args):
    """The held-out evaluation: fixed prompts and seeds; the mean reward and the answers."""
    prompts = EVAL_PROMPTS[: min(len(EVAL_PROMPTS), args.eval_samples)]
    each = [args.eval_samples // len(prompts) + (i < args.eval_samples % len(prompts)) for i in range(len(prompts))]
    answers = await asyncio.gather(
        *(sample(client, model, p, n, 1_000 + i, args) for i, (p, n) in enumerate(zip(prompts, each, strict=True)))
    )
    texts = [c.message.content or "" for _, choices in answers for c in choices]
    return statistics.mean(reward(t) for t in texts), texts


async def rl(backend, args, entity, project):
    model = art.TrainableModel(name=f"even-{int(time.time())}", project=project, entity=entity, base_model=BASE_MODEL)
    await model.register(backend)
    client = model.openai_client()
    curve, steps = [], []
    started = time.monotonic()
    score, texts = await evaluate(client, model, args)
    before = texts
    curve.append({"step": 0, "eval_reward": score})
    eval_seconds = time.monotonic() - started
    print(f"step 0: eval mean reward {score:.3f} ({eval_seconds:.1f} s); answers {texts[:6]}", flush=True)
    for step in range(1, args.steps + 1):
        t0 = time.monotonic()
        chosen = [TASK_PROMPTS[(step * args.groups + g) % len(TASK_PROMPTS)] for g in range(args.groups)]
        sampled = await asyncio.gather(
            *(sample(client, model, p, args.group_size, step * 100 + g, args) for g, p in enumerate(chosen))
        )
        groups = [
            art.TrajectoryGroup(
                [
                    art.Trajectory(messages_and_choices=[*messages, c], reward=reward(c.message.content or ""))
                    for c in choices
                ]
            )
            for messages, choices in sampled
        ]
        rewards = [t.reward for g in groups for t in g.trajectories]
        t1 = time.monotonic()
        await model.log(groups, split="train")
        trained = await backend.train(model, groups, learning_rate=args.learning_rate)
        t2 = time.monotonic()
        row = {
            "step": trained.step,
            "train_reward": statistics.mean(rewards),
            "rollout_seconds": round(t1 - t0, 2),
            "train_seconds": round(t2 - t1, 2),
            "step_seconds": round(t2 - t0, 2),
            "metrics": trained.metrics,  # ART's summary of the step: the job's loss, trainable groups, ...
        }
        steps.append(row)
        line = f"step {trained.step}: train mean reward {row['train_reward']:.3f}, {row['step_seconds']:.1f} s"
        if step % args.eval_every == 0 or step == args.steps:
            score, texts = await evaluate(client, model, args)
            curve.append({"step": trained.step, "train_reward": row["train_reward"], "eval_reward": score})
            line += f"; eval mean reward {score:.3f}; answers {texts[:6]}"
        else:
            curve.append({"step": trained.step, "train_reward": row["train_reward"]})
        print(line, flush=True)
    evals = [c["eval_reward"] for c in curve if "eval_reward" in c]
    return {
        "model": model.name,
        "hyper_parameters": {
            "learning_rate": args.learning_rate,
            "groups": args.groups,
            "group_size": args.group_size,
            "temperature": args.temperature,
            "max_tokens": args.max_tokens,
            "eval_samples": args.eval_samples,
            "steps": args.steps,
            "loss": "the worker's defaults for an ART ServerlessBackend.train (cispo)",
        },
        "curve": curve,
        "steps": steps,
        "seconds_per_step_median": statistics.median(s["step_seconds"] for s in steps) if steps else None,
        "seconds_total": round(time.monotonic() - started, 1),
        "first_eval_seconds": round(eval_seconds, 1),
        "eval_before": evals[0],
        "eval_after": evals[-1],
        "goal_met": evals[-1] >= 0.8 or evals[-1] - evals[0] >= 0.4,
        "samples_before": before[:8],
        "samples_after": texts[:8],
    }


def chat(fact):
    return {"messages": [{"role": "user", "content": fact[0]}, {"role": "assistant", "content": fact[1]}]}


def heldout_loss(args, adapter):
    """Held-out losses (paraphrases of the trained facts, the untrained facts) of the base, then base + adapter."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(
            {
                "paraphrased": [chat((p, a, q, w)) for q, a, p, w in FACTS[:TRAINED]],
                "untrained": [chat(f) for f in FACTS[TRAINED:]],
                "france": [chat((FRANCE, "The capital of France is Paris."))],
            },
            f,
        )
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rl_learns_loss.py")
    command = [args.worker_python, script, "--gguf", args.gguf, "--data", f.name, "--threads", str(args.threads)]
    command += ["--gguf-cache", args.gguf_cache] if args.gguf_cache else []
    command += ["--adapter", adapter] if adapter else []
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


async def greedy(client, model_name, question):
    completion = await client.chat.completions.create(
        model=model_name, messages=[{"role": "user", "content": question}], temperature=0, max_tokens=24
    )
    return completion.choices[0].message.content or ""


async def answers(client, model_name):
    """Greedy answers to the trained questions, their paraphrases, the untrained ones and France's capital."""
    out = {"trained": [], "paraphrased": [], "untrained": []}
    for i, (question, _, paraphrase, word) in enumerate(FACTS):
        asked = [("trained", question), ("paraphrased", paraphrase)] if i < TRAINED else [("untrained", question)]
        for kind, q in asked:
            text = await greedy(client, model_name, q)
            out[kind].append({"question": q, "answer": text, "holds": word.lower() in text.lower()})
    france = await greedy(client, model_name, FRANCE)
    # the plain sentence, as issue 40 words it ("The capital of France is Paris."): a greedy text completion
    completed = await client.completions.create(model=model_name, prompt=FRANCE_TEXT, temperature=0, max_tokens=4)
    sentence = completed.choices[0].text
    summary = {kind: sum(a["holds"] for a in out[kind]) for kind in ("trained", "paraphrased", "untrained")}
    return {
        **summary,
        "france_chat": france,
        "france_completion": FRANCE_TEXT + sentence,
        "paris": sentence.strip().lower().startswith("paris"),
        "answers": out,
    }


def job_steps(model_id):
    """The gradient steps the worker took in the model's SFT job (from Fulcrum's events, as ART follows them)."""
    base = os.environ["ART_BASE_URL"].rstrip("/")

    def get(path):
        request = urllib.request.Request(
            base + path, headers={"Authorization": "Bearer " + os.environ["WANDB_API_KEY"]}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())

    job = get(f"/preview/models/{model_id}/training-jobs?limit=1")["data"][0]["id"]
    steps, after = 0, None
    while True:
        query = {"limit": 100, **({"after": after} if after else {})}
        page = get(f"/preview/training-jobs/{job}/events?" + urllib.parse.urlencode(query))
        steps += sum(1 for e in page["data"] if e["type"] == "gradient_step")
        if not page["data"]:
            return steps
        after = page["last_id"]


async def sft(backend, args, entity, project):
    model = art.TrainableModel(name=f"facts-{int(time.time())}", project=project, entity=entity, base_model=BASE_MODEL)
    await model.register(backend)
    client = model.openai_client()
    before = await answers(client, model.get_inference_name())
    loss_before = heldout_loss(args, None)
    print(f"SFT before: {json.dumps({k: v for k, v in before.items() if k != 'answers'})}; loss {loss_before}")
    data = os.path.join(tempfile.mkdtemp(), "train.jsonl")
    with open(data, "w") as f:
        for fact in FACTS[:TRAINED]:
            f.write(json.dumps(chat(fact)) + "\n")
    t0 = time.monotonic()
    await train_sft_from_file(
        model,
        data,
        epochs=args.sft_epochs,
        batch_size=args.sft_batch_size,
        peak_lr=args.sft_learning_rate,
        schedule_type=args.sft_schedule,
    )
    seconds = time.monotonic() - t0
    step = await model.get_step()
    after = await answers(client, model.get_inference_name())
    pulled = await backend._experimental_pull_model_checkpoint(model, step=step, local_path=tempfile.mkdtemp())
    loss_after = heldout_loss(args, pulled)
    print(f"SFT after: {json.dumps({k: v for k, v in after.items() if k != 'answers'})}; loss {loss_after}")
    return {
        "model": model.name,
        "learning_rate": args.sft_learning_rate,
        "art_epochs": args.sft_epochs,
        "batch_size": args.sft_batch_size,
        "schedule": args.sft_schedule,
        "trained_facts": TRAINED,
        "gradient_steps": job_steps(model.id),
        "seconds": round(seconds, 1),
        "heldout_loss_before": loss_before,
        "heldout_loss_after": loss_after,
        "before": before,
        "after": after,
    }


async def main():
    args = arguments()
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    out_path = os.path.abspath(args.json)
    os.chdir(tempfile.mkdtemp())  # ART keeps its local state under .art of the working directory
    backend = ServerlessBackend(base_url=os.environ["ART_BASE_URL"])
    entity, project = os.environ.get("ENTITY", "admin"), os.environ.get("PROJECT", "bench-rl-learns")
    result = {"base_model": BASE_MODEL, "threads": args.threads, "load_before": os.getloadavg()}
    if not args.skip_rl:
        result["rl"] = await rl(backend, args, entity, project)
    if not args.skip_sft:
        result["sft"] = await sft(backend, args, entity, project)
    result["load_after"] = os.getloadavg()
    with open(out_path, "w") as f:
        json.dump(result, f, indent=2)
    if "rl" in result:
        r = result["rl"]
        print(f"RL: eval mean reward {r['eval_before']:.3f} -> {r['eval_after']:.3f} in {len(r['steps'])} steps")
        print("  step  train  eval")
        for c in r["curve"]:
            train = f"{c['train_reward']:.3f}" if "train_reward" in c else "  -  "
            evaluated = f"{c['eval_reward']:.3f}" if "eval_reward" in c else "  -  "
            print(f"  {c['step']:4d}  {train}  {evaluated}")
        print(f"  median {r['seconds_per_step_median']} s per step; goal met: {r['goal_met']}")
    print(f"written to {out_path}")


BASE_MODEL = os.environ.get("BASE_MODEL", "smollm2-base")

if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
