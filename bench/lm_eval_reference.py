"""llama.cpp's own log likelihoods of an lm-eval summary's choices (src/test/python/lm_eval/score.py's OUT), through
llama-cpp-python 0.3.36: each context and continuation tokenized by the model's own tokenizer and split as lm-eval
splits them (the context's trailing spaces go to the continuation, the whole tokenized at once), evaluated in one batch
with every position's logits kept (logits_all), each continuation token read from the logits of the position before
it. (llama-cpp-python's own echo logprobs read each prompt token from its own position's logits, one late, so its
server cannot be the reference.) Writes the summary's documents with these log likelihoods and the accuracy they give
as JSON to OUT.

Usage: lm_eval_reference.py GGUF SUMMARY OUT [THREADS]
"""

import json
import pathlib
import sys

import llama_cpp
import numpy as np


def log_softmax(row: np.ndarray) -> np.ndarray:
    shifted = row - row.max()
    return shifted - np.log(np.exp(shifted).sum())


def main() -> None:
    gguf, summary, out = sys.argv[1:4]
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    model = llama_cpp.Llama(gguf, logits_all=True, n_ctx=2048, n_batch=512, n_threads=threads, verbose=False)

    def tokens(text: str) -> list[int]:
        return model.tokenize(text.encode(), add_bos=False, special=False)

    documents, right = [], 0
    for sample in json.loads(pathlib.Path(summary).read_text())["samples"]:
        scores = []
        for context, continuation in sample["pairs"]:
            spaces = len(context) - len(context.rstrip())
            if spaces:
                context, continuation = context[:-spaces], context[-spaces:] + continuation
            whole = tokens(context + continuation)
            head = len(tokens(context))
            model.reset()
            model.eval(whole)
            rows = model.scores[: len(whole)]
            scores.append(float(sum(log_softmax(rows[i - 1])[whole[i]] for i in range(head, len(whole)))))
        right += int(np.argmax(scores)) == sample["target"]
        documents.append(
            {
                "doc_id": sample["doc_id"],
                "target": sample["target"],
                "pairs": sample["pairs"],
                "loglikelihoods": [round(score, 6) for score in scores],
            }
        )
    what = (
        f"llama.cpp's own log likelihoods of the task's choices (bench/lm_eval_reference.py, llama-cpp-python "
        f"{llama_cpp.__version__}, {gguf.rsplit('/', 1)[-1]}); bench/lm-eval.sh writes it again with WRITE_REFERENCE=1"
    )
    result = {"what": what, "acc": right / len(documents), "samples": documents}
    pathlib.Path(out).write_text(json.dumps(result, indent=1))
    print(f"llama.cpp reference: acc {result['acc']:.4f} over {len(documents)} documents")


if __name__ == "__main__":
    main()
