#!/usr/bin/env bash
# Measures what the console's run chart waits for: a run with ROWS history rows of two metrics (logged through the
# API in batches of 10,000), then the time of the API's history pages (10,000 rows each, keys=loss,acc) and of the
# console's history.json (the same rows as columns, compressed), each read REPEAT times.
#
#   bench/console-history.sh [rows] [repeat]
#
# The browser's side (navigation to a drawn chart) is measured by ConsoleRunsIT (target/console-it/runs-timing.txt).
set -euo pipefail

ROWS=${1:-100000}
REPEAT=${2:-5}
# shellcheck source=bench/server-lib.sh
source "$(dirname "$0")/server-lib.sh"
start_fulcrum

RUNS="$base/api/v1/entities/admin/projects/bench/runs"
auth=(-H "Authorization: Bearer $KEY")
curl -fs -o /dev/null "${auth[@]}" -H 'Content-Type: application/json' -d '{"name": "long"}' "$RUNS"

batch="$work/batch.json"
start=$(date +%s%N)
for ((first = 0; first < ROWS; first += 10000)); do
  python3 - "$first" "$ROWS" >"$batch" <<'EOF'
import json, math, sys
first, rows = int(sys.argv[1]), int(sys.argv[2])
print(json.dumps([{"_step": s, "loss": 2.5 / (1 + s / 500) + 0.05 * math.sin(s / 7), "acc": 1 - 0.9 / (1 + s / 800)}
                  for s in range(first, min(rows, first + 10000))]))
EOF
  curl -fs -o /dev/null "${auth[@]}" -H 'Content-Type: application/json' --data-binary "@$batch" "$RUNS/long/history"
done
echo "logged $ROWS rows in $(( ($(date +%s%N) - start) / 1000000 )) ms"

# a console session (the sign-in form), as the browser holds it
cookie=$(curl -fs -o /dev/null -D - -H "Origin: $base" --data-urlencode "api_key=$KEY" "$base/console/sign-in" \
  | sed -nE 's/^[Ss]et-[Cc]ookie: (fulcrum_console=[^;]+).*/\1/p')

for i in $(seq "$REPEAT"); do
  start=$(date +%s%N)
  pages=0
  offset=0
  while [[ -n $offset ]]; do
    next=$(curl -fs "${auth[@]}" "$RUNS/long/history?keys=loss,acc&limit=10000&offset=$offset" \
      | python3 -c 'import json,sys; n=json.load(sys.stdin).get("next_offset"); print("" if n is None else n)')
    pages=$((pages + 1))
    offset=$next
  done
  api_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  console=$(curl -fs --compressed -o /dev/null -H "Cookie: $cookie" -H 'Accept-Encoding: gzip' \
    -w '%{time_total} s, %{size_download} bytes transferred' "$base/console/projects/admin/bench/runs/long/history.json?keys=loss,acc")
  echo "read $i: API $pages pages in $api_ms ms (with client-side JSON parsing); console history.json $console"
done
echo "load before: $load_before, after: $(cut -d" " -f1-3 /proc/loadavg)"
