"""The official `weave` SDK (pinned in ../requirements.txt), unchanged, against Fulcrum (WeavePythonSdkTest).

MODE=member: publishes a 10,000-row dataset and reads it back row by row with its keys in order, adds rows, runs an
Evaluation with two scorers over a 100-row dataset, reads every call back through /calls/stream_query, adds and reads
feedback, publishes a prompt and a model and reads them back. Prints one JSON line "RESULT {...}" for the Java test.
MODE=viewer: a viewer's publish, which must fail with the SDK's own error; prints "REFUSED <error>".
"""

import asyncio
import json
import os
import sys

import weave

PROJECT = os.environ["PROJECT"]


def rows(n):
    # keys deliberately not in sorted order; nested objects, unicode, integers and floats
    return [
        {
            "zeta": i,
            "question": f"Wie viel ist {i} + {i}? — 問題 {i} 🎯",
            "answer": str(2 * i),
            "meta": {"tags": ["é", "ß", i % 7], "score": i / 3, "nested": {"b": 1, "a": [1.5, None, True]}},
            "alpha": None,
        }
        for i in range(n)
    ]


def member():
    client = weave.init(PROJECT)
    big = rows(10_000)
    ref = weave.publish(weave.Dataset(name="big-set", rows=big))
    got = weave.ref("big-set:latest").get()
    read = [dict(r) for r in got.rows]
    assert len(read) == len(big), len(read)
    for i, (want, have) in enumerate(zip(big, read, strict=True)):
        have = json.loads(json.dumps(have))
        assert list(have.keys()) == list(want.keys()), (i, list(have.keys()))
        assert list(have["meta"].keys()) == list(want["meta"].keys()), (i, have["meta"])
        assert list(have["meta"]["nested"].keys()) == ["b", "a"], (i, have["meta"])
        assert have == want, (i, have, want)

    small = weave.Dataset(name="small-set", rows=rows(3))
    weave.publish(small)
    small = weave.ref("small-set:latest").get()
    small.add_rows([{"zeta": 99, "question": "added", "answer": "x", "meta": {}, "alpha": 1}])
    after = weave.ref("small-set:latest").get()
    added = [dict(r) for r in after.rows]
    assert len(added) == 4 and added[3]["question"] == "added", added

    eval_rows = [{"q": f"{i}+{i}", "expected": str(2 * i)} for i in range(100)]
    eval_ds = weave.Dataset(name="eval-set", rows=eval_rows)

    @weave.op
    def adder(q: str) -> str:
        a, b = q.split("+")
        n = int(a) + int(b)
        return str(n if n % 10 else n + 1)  # every fifth answer (i % 5 == 0) wrong

    @weave.op
    def exact(expected: str, output: str) -> dict:
        return {"correct": expected == output}

    @weave.op
    def length(output: str) -> dict:
        return {"len": len(output)}

    evaluation = weave.Evaluation(name="adder-eval", dataset=eval_ds, scorers=[exact, length])
    summary = asyncio.run(evaluation.evaluate(adder))
    assert summary["exact"]["correct"]["true_count"] == 80, summary
    client.flush()

    calls = list(client.get_calls())
    ops = {}
    for c in calls:
        name = c.op_name.split("/")[-1].split(":")[0]
        ops[name] = ops.get(name, 0) + 1
    evaluate_calls = [c for c in calls if c.op_name.split("/")[-1].startswith("Evaluation.evaluate:")]
    assert len(evaluate_calls) == 1, ops
    ev = evaluate_calls[0]
    assert ev.output["exact"]["correct"]["true_count"] == 80, ev.output
    assert ev.ended_at is not None
    # the SDK finds an evaluation's runs by filtering calls on input_refs (the evaluation's ref among the inputs)
    runs = list(evaluation.get_evaluate_calls())
    assert [c.id for c in runs] == [ev.id], [c.id for c in runs]

    one = client.get_call(calls[0].id)
    assert one.id == calls[0].id

    # feedback added and read back
    ev.feedback.add_reaction("👍")
    ev.feedback.add_note("looks right")
    client.flush()
    mine = list(client.get_call(ev.id).feedback)
    types = sorted(f.feedback_type for f in mine)
    assert types == ["wandb.note.1", "wandb.reaction.1"], types
    # the scorers' results are feedback too, one per scored call and scorer
    fb = [f for f in client.get_feedback(limit=1000) if f.feedback_type.startswith("wandb.runnable.")]
    assert len(fb) == 200, len(fb)

    # rename and delete through the SDK
    ev.set_display_name("renamed-eval")
    client.flush()
    assert client.get_call(ev.id).display_name == "renamed-eval"

    prompt = weave.StringPrompt("Answer briefly: {question}")
    weave.publish(prompt, name="brief-prompt")
    got_prompt = weave.ref("brief-prompt:latest").get()
    assert got_prompt.format(question="2+2") == "Answer briefly: 2+2", got_prompt

    class Echo(weave.Model):
        prefix: str

        @weave.op
        def predict(self, q: str) -> str:
            return self.prefix + q

    weave.publish(Echo(prefix=">> "), name="echo-model")
    echo = weave.ref("echo-model:latest").get()
    assert echo.prefix == ">> ", echo
    client.flush()

    print(
        "RESULT "
        + json.dumps(
            {
                "big_uri": ref.uri(),
                "big_digest": ref.digest,
                "big_keys": list(read[0].keys()),
                "small_uri": weave.ref("small-set:latest").get().ref.uri(),
                "calls": len(calls),
                "ops": ops,
                "evaluate_id": ev.id,
                "summary": summary,
                "feedback": len(fb),
            }
        )
    )


def viewer():
    weave.init(PROJECT)
    try:
        ref = weave.publish(weave.Dataset(name="viewer-set", rows=[{"a": 1}]))
        ref.uri()
    except Exception as e:  # the SDK's own error, whatever its class
        print("REFUSED " + type(e).__name__ + ": " + str(e).replace("\n", " ")[:500])
        return
    print("NOT REFUSED")


if __name__ == "__main__":
    {"member": member, "viewer": viewer}[os.environ.get("MODE", "member")]()
    sys.stdout.flush()
