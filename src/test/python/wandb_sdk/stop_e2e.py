"""Stopping runs, as the official `wandb` SDK (unchanged) sees it, against Fulcrum (WANDB_BASE_URL, WANDB_API_KEY).

Phase 1: the run RUN_ID logs a step every 0.2 s until its process is stopped: the test asks the stop through the runs
API meanwhile; the SDK learns it from its file stream's answers and interrupts the script (KeyboardInterrupt). Phase 2:
a second run is stopped by the SDK's own public API (`wandb.Api().run(path).stop()`, the `StopRun` mutation). Each
run then finishes and is read back: state `killed`. Prints `RESULT {json}` with the seconds each stop took to arrive.
"""

import json
import os
import time

import wandb

LIMIT_SECONDS = 45


def log_until_stopped(run, since):
    step = 0
    try:
        while time.monotonic() - since < LIMIT_SECONDS:
            run.log({"step_value": step})
            step += 1
            time.sleep(0.2)
    except KeyboardInterrupt:
        return time.monotonic() - since
    return None


def start(entity, project, run_id):
    # the file stream sends every second (the default is 15 s), so the stop arrives within the SDK's 15 s poll
    settings = wandb.Settings(x_file_stream_transmit_interval=1)
    return wandb.init(entity=entity, project=project, id=run_id, settings=settings)


def main(entity, project, run_id):
    api = wandb.Api()
    run = start(entity, project, run_id)
    asked_by_test = log_until_stopped(run, time.monotonic())
    assert asked_by_test is not None, "the stop asked through the runs API never reached the SDK"
    run.finish()

    second = start(entity, project, run_id + "-2")
    second.log({"step_value": 0})
    since = time.monotonic()
    api.run(f"{entity}/{project}/{second.id}").stop()
    asked_by_sdk = log_until_stopped(second, since)
    assert asked_by_sdk is not None, "the stop asked by run.stop() never reached the SDK"
    second.finish()

    states = [wandb.Api().run(f"{entity}/{project}/{name}").state for name in (run.id, second.id)]
    assert states == ["killed", "killed"], states
    print("RESULT " + json.dumps({"runApi": asked_by_test, "sdkStop": asked_by_sdk, "second": second.id}))


if __name__ == "__main__":
    main(os.environ["ENTITY"], os.environ["PROJECT"], os.environ["RUN_ID"])
