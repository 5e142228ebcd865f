"""The official `weave` SDK (pinned in ../requirements.txt), unchanged, against Fulcrum (WeavePythonSdkTest).

MODE=member: publishes a 10,000-row dataset and reads it back row by row with its keys in order, adds rows, runs an
Evaluation with two scorers over a 100-row dataset, reads every call back through /calls/stream_query, adds and reads
feedback, publishes a prompt and a model and reads them back, then what else Weave's trace server interface serves
(issue 55, section 3): lists, text, numbers and tables published and read back with Weave's own digests, calls sorted by
inputs, output and latency, `$convert` in queries, feedback included in calls, refs read with a path into the object
(`/refs/read_batch`) and table statistics in a batch. Prints one JSON line "RESULT {...}" for the Java test.
MODE=viewer: a viewer's publish, which must fail with the SDK's own error; prints "REFUSED <error>".
"""

import asyncio
import json
import os
import sys
import time

import weave
from weave.trace.serialization.digest import compute_object_digest, compute_row_digest, compute_table_digest

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
    # the SDK sends a table of more than 1,000 rows in chunks, then makes the whole with table_create_from_digests:
    # counted here (the SDK's own binding, only wrapped)
    from_digests = []
    send_from_digests = client.server.table_create_from_digests

    def counted(req):
        from_digests.append(len(req["row_digests"]))
        return send_from_digests(req)

    client.server.table_create_from_digests = counted
    big = rows(10_000)
    ref = weave.publish(weave.Dataset(name="big-set", rows=big))
    assert 10_000 in from_digests, from_digests
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

    echo_ref = weave.publish(Echo(prefix=">> "), name="echo-model")
    echo = weave.ref("echo-model:latest").get()
    assert echo.prefix == ">> ", echo
    client.flush()

    interface = trace_server_interface(client, echo_ref)

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
                **interface,
            }
        )
    )


def trace_server_interface(client, echo_ref):
    """What the SDK asks of Weave's trace server interface beyond datasets, evaluations and feedback."""
    # any JSON value is an object: its digest is the one Weave computes, and it reads back as published
    published = {}
    for name, value in (("a-list", [1, "two"]), ("a-text", "text"), ("a-number", 3.5)):
        ref = weave.publish(value, name=name)
        assert ref.digest == compute_object_digest(value), (name, ref.digest, compute_object_digest(value))
        got = weave.ref(f"{name}:latest").get()
        assert (list(got) if isinstance(value, list) else got) == value, (name, got)
        published[name] = ref.digest

    # a table published alone, and inside a published object
    table_rows = [{"b": i, "a": f"row {i}", "nested": {"z": [i, None], "y": i / 4}} for i in range(5)]
    weave.publish(weave.Table(table_rows), name="a-table")
    table = weave.ref("a-table:latest").get()
    assert [json.loads(json.dumps(dict(r))) for r in table] == table_rows, list(table)
    weave.publish({"title": "holder", "table": weave.Table(table_rows)}, name="table-holder")
    holder = weave.ref("table-holder:latest").get()
    assert holder["title"] == "holder", holder
    assert [json.loads(json.dumps(dict(r))) for r in holder["table"]] == table_rows, holder
    table_digest = compute_table_digest([compute_row_digest(r) for r in table_rows])

    # refs with a path into the object, which the SDK reads through /refs/read_batch: a key, a list item, a table row
    row = table_rows[3]
    holder_uri = weave.ref("table-holder:latest").get().ref.uri()
    got_row = weave.ref(f"{holder_uri}/key/table/id/{compute_row_digest(row)}").get()
    assert json.loads(json.dumps(dict(got_row))) == row, got_row
    assert weave.ref(f"{echo_ref.uri()}/attr/prefix").get() == ">> "
    list_uri = weave.ref("a-list:latest").get().ref.uri()
    assert weave.ref(f"{list_uri}/index/1").get() == "two"
    batch = client.server.refs_read_batch({"refs": [f"{list_uri}/index/0", f"{holder_uri}/key/title"]})
    assert list(batch.vals) == [1, "holder"], batch

    # table statistics in a batch (the SDK's server binding): only the tables the project has, in the order asked
    stats = client.server.table_query_stats_batch(
        {"project_id": PROJECT, "digests": ["0" * 64, table_digest], "include_storage_size": True}
    )
    assert [(t.digest, t.count) for t in stats.tables] == [(table_digest, 5)], stats
    assert stats.tables[0].storage_size_bytes > 0, stats

    # calls sorted by a key path of their inputs (numbers by value) and output, and by latency
    @weave.op
    def scale(x: float, label: str) -> dict:
        return {"value": x * 2, "label": label}

    @weave.op
    def nap(ms: int) -> int:
        time.sleep(ms / 1000)
        return ms

    for x, label in ((3.0, "c"), (10.0, "a"), (-1.5, "b"), (2.0, "d")):
        scale(x, label)
    for ms in (40, 5, 80):
        nap(ms)
    client.flush()
    scaled = {"op_names": [f"weave:///{PROJECT}/op/scale:*"]}
    by_input = client.get_calls(filter=scaled, sort_by=[{"field": "inputs.x", "direction": "asc"}])
    assert [c.inputs["x"] for c in by_input] == [-1.5, 2.0, 3.0, 10.0], [c.inputs for c in by_input]
    by_output = client.get_calls(filter=scaled, sort_by=[{"field": "output.label", "direction": "desc"}])
    assert [c.output["label"] for c in by_output] == ["d", "c", "b", "a"]
    by_latency = client.get_calls(
        filter={"op_names": [f"weave:///{PROJECT}/op/nap:*"]},
        sort_by=[{"field": "summary.weave.latency_ms", "direction": "desc"}],
    )
    assert [c.inputs["ms"] for c in by_latency] == [80, 40, 5], [c.summary for c in by_latency]

    # $convert: the output's value compared as a number (as text, "20.0" would be less than "5")
    over_five = {"$gt": [{"$convert": {"input": {"$getField": "output.value"}, "to": "double"}}, {"$literal": 5}]}
    big = client.get_calls(filter=scaled, query={"$expr": over_five})
    assert sorted(c.inputs["x"] for c in big) == [3.0, 10.0], [c.inputs for c in big]

    # feedback included in the calls when asked
    first = list(by_input)[0]
    first.feedback.add_reaction("🎯")
    client.flush()
    with_feedback = list(client.get_calls(filter={"call_ids": [first.id]}, include_feedback=True))
    feedback = with_feedback[0].summary["weave"]["feedback"]
    assert [f["feedback_type"] for f in feedback] == ["wandb.reaction.1"], feedback
    assert "🎯" in json.dumps(feedback[0]["payload"], ensure_ascii=False), feedback
    plain = list(client.get_calls(filter={"call_ids": [first.id]}))
    assert "feedback" not in plain[0].summary["weave"], plain[0].summary
    # every call of the project, these ops' too
    return {
        "published": published,
        "table_digest": table_digest,
        "reacted_call": first.id,
        "all_calls": len(list(client.get_calls())),
    }


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
