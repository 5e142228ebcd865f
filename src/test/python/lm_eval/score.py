"""lm-evaluation-harness, unchanged, scoring the multiple-choice task of tasks/fulcrum_facts through an
OpenAI-compatible server's text completions (its `local-completions` model: each choice's tokens scored with echo and
logprobs).

Environment: BASE_URL (the server's /v1/completions), MODEL, OPENAI_API_KEY, TOKENIZER (a directory holding the model's
Hugging Face tokenizer), OUT (where the summary goes as JSON: acc, acc_norm, and per document each choice's context,
continuation and log likelihood). No Hugging Face Hub: the task's data is the JSONL beside its YAML.
"""

import json
import os
import pathlib

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import lm_eval  # noqa: E402
import yaml  # noqa: E402

TASK = pathlib.Path(__file__).resolve().parent / "tasks" / "fulcrum_facts"

config = yaml.safe_load((TASK / "fulcrum_facts.yaml").read_text())
files = config["dataset_kwargs"]["data_files"]
files["test"] = str(TASK / files["test"])

results = lm_eval.simple_evaluate(
    model="local-completions",
    model_args={
        "base_url": os.environ["BASE_URL"],
        "model": os.environ["MODEL"],
        "tokenizer": os.environ["TOKENIZER"],
        "tokenizer_backend": "huggingface",
        "tokenized_requests": True,
        "num_concurrent": 1,
        "batch_size": 4,
        "max_retries": 1,
    },
    tasks=[config],
    log_samples=True,
    bootstrap_iters=0,
)
scores = results["results"]["fulcrum_facts"]
samples = []
for sample in sorted(results["samples"]["fulcrum_facts"], key=lambda s: s["doc_id"]):
    pairs = [list(request) for request in sample["arguments"]]
    samples.append(
        {
            "doc_id": sample["doc_id"],
            "target": sample["target"],
            "pairs": pairs,
            "loglikelihoods": [resp[0] for resp in sample["filtered_resps"]],
        }
    )
summary = {"acc": scores["acc,none"], "acc_norm": scores["acc_norm,none"], "samples": samples}
pathlib.Path(os.environ["OUT"]).write_text(json.dumps(summary, indent=1))
print(
    f"lm-eval fulcrum_facts: acc {summary['acc']:.4f} acc_norm {summary['acc_norm']:.4f} over {len(samples)} documents"
)
