#!/usr/bin/env bash
# Big artifacts (issue 41 §3): the wandb SDK (0.31.0, the test venv) logs a GB-gibibyte file (random throughout) as a
# multipart upload and another run downloads it, the SHA-256s compared (src/test/python/wandb_sdk/artifacts_e2e.py,
# MODE=big), against the packaged server with a bounded heap (-Xmx512m), on the file-system blob store and on S3
# (S3Proxy from the build's target/s3proxy, on its file-system backend), each beside a plain `cp` of the same file.
# Usage: bench/big-artifacts.sh            (GB=3 STORES="filesystem s3" JAVA_OPTS=-Xmx512m to change)
set -euo pipefail
cd "$(dirname "$0")/.."

# the SDK takes keys of 40 characters or more after a '-' or '_' only
KEY=fk_$(python3 -c 'import secrets; print(secrets.token_hex(32))')
JAVA_OPTS=${JAVA_OPTS:--Xmx512m}
# shellcheck source=bench/server-lib.sh
source bench/server-lib.sh

# the test suite's client venv, made when missing or stale
python=$(scripts/test-venv.sh src/test/python/requirements.txt | tail -n 1)
if [[ ! -f target/s3proxy/s3proxy.jar ]]; then
  ./mvnw -B -q generate-test-resources
fi

start_s3proxy() {
  local s3port
  s3port=$(free_port)
  mkdir -p "$work/s3/fulcrum-bench"
  cat >"$work/s3proxy.properties" <<PROPS
s3proxy.endpoint=http://127.0.0.1:$s3port
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=bench-access
s3proxy.credential=bench-secret
jclouds.provider=filesystem
jclouds.filesystem.basedir=$work/s3
jclouds.identity=unused
jclouds.credential=unused
PROPS
  java -Xmx512m -jar target/s3proxy/s3proxy.jar --properties "$work/s3proxy.properties" >"$work/s3proxy.log" 2>&1 &
  other_pids+=($!)
  for _ in $(seq 240); do
    curl -s -o /dev/null "http://127.0.0.1:$s3port/" && break
    sleep 0.25
  done
  export FULCRUM_ARTIFACTS_BLOB_STORE=s3 FULCRUM_ARTIFACTS_S3_ENDPOINT=http://127.0.0.1:$s3port
  export FULCRUM_ARTIFACTS_S3_BUCKET=fulcrum-bench FULCRUM_ARTIFACTS_S3_ACCESS_KEY_ID=bench-access
  export FULCRUM_ARTIFACTS_S3_SECRET_ACCESS_KEY=bench-secret
}

mkdir -p bench/results
result="bench/results/big-artifacts-$(date +%Y-%m-%d).txt"
{
  echo "Fulcrum big artifacts benchmark, $(date -u +%Y-%m-%dT%H:%MZ), load before: $load_before, $(nproc) cores," \
    "server $JAVA_OPTS"
  for store in ${STORES:-filesystem s3}; do
    if [[ $store == s3 ]]; then start_s3proxy; fi
    # shellcheck disable=SC2119 # no extra options for the server
    start_fulcrum
    WANDB_BASE_URL=$base WANDB_API_KEY=$KEY ENTITY=admin PROJECT=big-$store WANDB_DIR=$work WANDB_SILENT=true \
      MODE=big BIG_BYTES=$((${GB:-3} << 30)) BIG_DENSE=1 BIG_DIR=$work \
      $python src/test/python/wandb_sdk/artifacts_e2e.py >"$work/sdk.out" 2>&1 ||
      {
        tail -20 "$work/sdk.out"
        grep -h '"level":"ERROR"' "$work"/wandb/run-*/logs/debug-internal.log | tail -5
        grep -E 'ERROR|Exception' "$work/fulcrum.log" | tail -20
        exit 1
      }
    grep '^BIG ' "$work/sdk.out" | cut -c5- >"$work/big.json"
    python3 - "$store" "$work/big.json" <<'PY'
import json
import sys

store, path = sys.argv[1], sys.argv[2]
with open(path) as f:
    big = json.load(f)
gib = big["bytes"] / (1 << 30)
print(
    f"{store}: {gib:.0f} GiB, SHA-256 {big['sha256'][:16]}... equal after the round trip; s per GiB:"
    f" SDK upload {big['upload_seconds'] / gib:.1f}, SDK download {big['download_seconds'] / gib:.1f},"
    f" cp {big['cp_seconds'] / gib:.1f}"
)
PY
    grep -c OutOfMemoryError "$work/fulcrum.log" | sed "s/^/$store: OutOfMemoryError lines in the server log: /" || true
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    pid=
  done
} | tee "$result"
