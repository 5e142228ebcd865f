"""Stopping a run, as the official `wandb` SDK (unchanged) sees it, against Fulcrum (WANDB_BASE_URL, WANDB_API_KEY).

The run RUN_ID logs a step every 0.2 s until its process is stopped. With STOPPER=test the test asks the stop through
the runs API meanwhile; with STOPPER=sdk the script asks it itself through the SDK's public API
(`wandb.Api().run(path).stop()`, the `StopRun` mutation). Either way the SDK learns it from its file stream's answers
and interrupts the script (KeyboardInterrupt); the run then finishes and is read back: state `killed`. Prints
`RESULT {json}` with the seconds the stop took to arrive. The test runs both at once, each in its own process (the SDK
stops a process, not one of its runs).
"""

import json
import os
import signal
import time

import wandb

LIMIT_SECONDS = 120  # a bound for a stop that never arrives; a loaded machine may take a minute


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


def main(entity, project, run_id, stopper):
    # the SDK stops a script by sending its main thread SIGINT; a process started with SIGINT ignored (a background
    # job of a non-interactive shell, and every process it starts) would never see it: Python's own handler, as in a
    # terminal
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # the file stream sends every second (the default is 15 s), so the stop arrives within the SDK's 15 s poll
    settings = wandb.Settings(x_file_stream_transmit_interval=1)
    run = wandb.init(entity=entity, project=project, id=run_id, settings=settings)
    if stopper == "sdk":
        run.log({"step_value": 0})
        since = time.monotonic()
        wandb.Api().run(f"{entity}/{project}/{run.id}").stop()
    else:
        since = time.monotonic()
    stopped_after = log_until_stopped(run, since)
    assert stopped_after is not None, f"the stop asked by the {stopper} never reached the SDK"
    run.finish()

    state = wandb.Api().run(f"{entity}/{project}/{run.id}").state
    assert state == "killed", state
    print("RESULT " + json.dumps({"stopped_after": stopped_after, "run": run.id}))


if __name__ == "__main__":
    main(os.environ["ENTITY"], os.environ["PROJECT"], os.environ["RUN_ID"], os.environ["STOPPER"])
