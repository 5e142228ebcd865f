"""The official `weave` SDK (pinned in ../requirements.txt), unchanged, against Fulcrum (WeaveMetricAutomationsTest).

Runs a small `weave.Evaluation`: four questions, a model op `answer` that gets them right and a scorer `exact`. The
evaluation records each score three ways, which the test's WEAVE_METRIC_THRESHOLD automations watch: the scorer's own
calls (`exact`, output `{"correct": true}`), the `Evaluation.predict_and_score` calls (output `scores.exact.correct`)
and feedback `wandb.runnable.exact` on the model's calls. Then the `wandb` SDK lists the entity's automations (which
leave out those it cannot read). Prints one JSON line "RESULT {...}" for the Java test.
"""

import asyncio
import json
import os

import wandb
import weave

PROJECT = os.environ["PROJECT"]


def main():
    client = weave.init(PROJECT)
    rows = [{"question": f"{i}+{i}", "expected": str(2 * i)} for i in range(4)]

    @weave.op
    def answer(question: str) -> str:
        a, b = question.split("+")
        return str(int(a) + int(b))

    @weave.op
    def exact(expected: str, output: str) -> dict:
        return {"correct": expected == output}

    evaluation = weave.Evaluation(
        name="checkpoint-eval", dataset=weave.Dataset(name="sums", rows=rows), scorers=[exact]
    )
    summary = asyncio.run(evaluation.evaluate(answer))
    client.flush()
    # the wandb SDK's listing, which its EventType could not read with a WEAVE_METRIC_THRESHOLD automation in it
    listed = {a.name: str(a.event.event_type.value) for a in wandb.Api().automations(entity=PROJECT.split("/")[0])}
    print("RESULT " + json.dumps({"summary": summary, "automations": listed}), flush=True)


if __name__ == "__main__":
    main()
