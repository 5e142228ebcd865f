#!/usr/bin/env bash
# Fairness of the built-in model: while FLOODERS clients of one project (admin/flood) send chat completions to
# fulcrum-tiny as fast as they are answered, one client of another project (admin/victim) sends 4-token requests one
# after the other; prints the victim's latency (p50, p99, longest) and what the flood got.
# Two floods run one after the other: the request of issue 13 ({"n":128,"max_tokens":2147483647}, refused by the
# limits since) and the most expensive request the limits accept (n=4 at the built-in model's max_tokens of 1024,
# n * max_tokens = 4096; FLOOD_N and FLOOD_MAX_TOKENS change it).
# GGUF=path/model.gguf runs the same on that GGUF model served by llama.cpp inside Fulcrum instead (catalog id
# bench-gguf, THREADS=2 CPU threads, PARALLEL=1 slots, max-tokens 1024; the issue's request is refused by max-tokens).
# Usage: bench/fairness.sh      (DURATION=30s FLOODERS=30 FLOOD_N=4 FLOOD_MAX_TOKENS=1024 JAR=... JAVA_OPTS=...
#                                GGUF=... THREADS=2 PARALLEL=1
#                                LABEL=before: written to bench/results/fairness-<date>-<label>.txt)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-30s}
FLOODERS=${FLOODERS:-30}
FLOOD_N=${FLOOD_N:-4}
FLOOD_MAX_TOKENS=${FLOOD_MAX_TOKENS:-1024}
# shellcheck source=bench/wrk-lib.sh
source bench/wrk-lib.sh
if [[ -n ${GGUF:-} ]]; then
  MODEL=bench-gguf
  start_fulcrum -Dfulcrum.inference.models.bench-gguf.gguf="$(realpath "$GGUF")" \
    -Dfulcrum.inference.models.bench-gguf.threads="${THREADS:-2}" \
    -Dfulcrum.inference.models.bench-gguf.parallel="${PARALLEL:-1}" \
    -Dfulcrum.inference.models.bench-gguf.max-tokens=1024
else
  MODEL=fulcrum-tiny
  start_fulcrum
fi

prompt='"messages": [{"role": "user", "content": "Tell me a long story about the sea."}]'
issue_body="{\"model\": \"$MODEL\", $prompt, \"n\": 128, \"max_tokens\": 2147483647}"
limit_body="{\"model\": \"$MODEL\", $prompt, \"n\": $FLOOD_N, \"max_tokens\": $FLOOD_MAX_TOKENS}"
victim_body="{\"model\": \"$MODEL\", \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"max_tokens\": 4}"

# victim SECONDS: 4-token requests of admin/victim one after the other for that long (the last one may end later;
# each waits at most 180 s); one line per request: status and seconds
victim() {
  python3 - "$base" "$KEY" "$victim_body" "$1" <<'PY'
import http.client, sys, time, urllib.parse
base, key, body, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
url = urllib.parse.urlparse(base)
end = time.monotonic() + seconds
while time.monotonic() < end:
    started = time.monotonic()
    try:
        c = http.client.HTTPConnection(url.hostname, url.port, timeout=180)
        c.request("POST", "/v1/chat/completions", body, {"Authorization": "Bearer " + key,
                  "Content-Type": "application/json", "Compat-Project": "admin/victim"})
        status = c.getresponse().status
        c.close()
    except Exception as e:
        status = type(e).__name__
    print(status, f"{time.monotonic() - started:.4f}", flush=True)
    time.sleep(0.1)
PY
}

seconds=${DURATION%s}
run() { # name body
  BENCH_KEY=$KEY BENCH_PROJECT=admin/flood BENCH_BODY=$2 \
    wrk -t2 -c"$FLOODERS" -d"$DURATION" --timeout 120s --latency -s bench/flood.lua "$base/v1/chat/completions" \
    >"$work/flood-$1.txt" &
  local flood=$!
  other_pids+=("$flood")
  sleep 2 # the flood first fills the model's threads
  victim "$((seconds - 2))" >"$work/victim-$1.txt"
  wait "$flood" || true
  sleep 2 # answers still being generated when wrk stopped
}
victim 5 >/dev/null # warm-up
run issue "$issue_body"
run limit "$limit_body"
first=$(curl -s -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -H 'Compat-Project: admin/flood' \
  -d "$issue_body" "$base/v1/chat/completions")

mkdir -p bench/results
result="bench/results/fairness-$(date +%Y-%m-%d)${LABEL:+-$LABEL}.txt"
python3 - "$work" "$DURATION" "$FLOODERS" "$load_before" "$JAR" "$issue_body" "$limit_body" "$first" "$MODEL" <<'PY' | tee "$result"
import re, sys
sys.path.insert(0, "bench")
import wrk_results
work, duration, flooders, load, jar, issue_body, limit_body, first, model = sys.argv[1:10]
print(wrk_results.header(f"Fulcrum fairness benchmark on {model}", load))
print(f"jar {jar}; {flooders} flooding connections (wrk, project admin/flood) for {duration}; one victim client "
      f"(project admin/victim, max_tokens 4, requests one after the other)")
print(f"the issue's flood request answered: {first[:200]}")
for name, body in (("issue", issue_body), ("limit", limit_body)):
    rows = [line.split() for line in open(f"{work}/victim-{name}.txt") if line.strip()]
    times = sorted(float(t) for _, t in rows)
    statuses = {}
    for s, _ in rows:
        statuses[s] = statuses.get(s, 0) + 1
    flood = open(f"{work}/flood-{name}.txt").read()
    requests = re.search(r"(\d+) requests in", flood)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", flood)
    def pct(p):
        return times[min(len(times) - 1, max(0, round(p / 100 * len(times) + 0.5) - 1))] * 1000
    print()
    print(f"flood body: {body[:160]}")
    print(f"  flood: {requests.group(1) if requests else '?'} responses, "
          f"{non2xx.group(1) if non2xx else 0} of them not 2xx")
    if times:
        print(f"  victim: {len(times)} requests {statuses}; latency p50 {pct(50):.0f} ms, p99 {pct(99):.0f} ms, "
              f"longest {times[-1] * 1000:.0f} ms")
    else:
        print("  victim: no request completed")
PY
echo "written to $result"
