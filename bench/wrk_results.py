"""Reads wrk --latency output for the benchmark scripts (bench/datasets.sh, bench/inference.sh)."""

import os
import re
import subprocess


def parse(path):
    """(requests/s, p50 ms, p99 ms, non-2xx responses, socket errors) of one wrk run."""
    with open(path) as f:
        text = f.read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))

    def pct(p):
        m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        value, unit = float(m.group(1)), m.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    socket_errors = re.search(r"Socket errors: (.*)", text)
    return (
        rps,
        pct(50),
        pct(99),
        (int(errors.group(1)) if errors else 0),
        (socket_errors.group(1) if socket_errors else "none"),
    )


def header(title, load):
    """The first lines of a result: what ran, when, on which machine."""
    with open("/proc/cpuinfo") as f:
        cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    now = subprocess.run(["date", "-Iseconds"], capture_output=True, text=True).stdout.strip()
    return f"{title}, {now}\nmachine: {os.cpu_count()} cores ({cpu}), load average before the run: {load}"
