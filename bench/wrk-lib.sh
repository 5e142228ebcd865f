# Shared by the wrk benchmarks (datasets.sh, inference.sh, fairness.sh; sourced): the load settings, wrk, and the
# server as server-lib.sh starts it.
# shellcheck shell=bash

DURATION=${DURATION:-20s}
CONNECTIONS=${CONNECTIONS:-32}
THREADS=${THREADS:-2}
# on 2 shared cores the JIT needs tens of seconds of load before the code runs compiled
WARMUP=${WARMUP:-10s}
WARMUP_ROUNDS=${WARMUP_ROUNDS:-3}
# shellcheck source=bench/server-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
need_wrk
