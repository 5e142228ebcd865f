"""Calls ingested per second through the Python weave SDK's batch path (bench/weave-calls.sh).

Traces CALLS calls of one op (each its own trace root) in the project PROJECT, then waits until the SDK's batch
processor has sent them all (client.flush()); prints calls per second over that whole time, and how much of it went
into the traced calls themselves (the SDK's work in this process, while its sender already posts batches) and how much
into waiting for the last batches.
"""

import os
import time

import weave

client = weave.init(os.environ["PROJECT"])
calls = int(os.environ.get("CALLS", "5000"))


@weave.op
def bench_op(i: int) -> dict:
    return {"i": i, "text": "x" * 64}


start = time.perf_counter()
for i in range(calls):
    bench_op(i)
traced = time.perf_counter() - start
client.flush()
elapsed = time.perf_counter() - start
print(
    f"ingest: {calls} calls in {elapsed:.2f} s = {calls / elapsed:.0f} calls/s (SDK batch path, calls/complete);"
    f" {traced:.2f} s of it in the traced function calls themselves (the SDK's own work in this process),"
    f" {elapsed - traced:.2f} s waiting for client.flush()"
)
