#!/usr/bin/env bash
# A model served by several replicas (issue 53 §4), two measurements (PARTS="A B", both by default):
# A. One replica, before and after the replica-routing change: bench/inference.sh with REFERENCE=0 (the same load
#    direct to its stub and through Fulcrum) run ROUNDS times on the build before (BEFORE, default the merge base of
#    HEAD and a091b63, built in a git worktree under target/bench-before/ unless its jar is already there) and as many
#    times on the current build (target/quarkus-app, copied at the start so that a rebuild meanwhile changes nothing),
#    alternated: round 1 before then current, round 2 current then before, and so on. Prints, per build and connection
#    count (CONNECTION_COUNTS), each round's req/s, p50, p99, the p50 Fulcrum adds to the stub's and the gateway's CPU
#    per request, then each build's mean and the current build's difference in percent.
# B. Three replicas against one when the replica is the bottleneck: three stubs with a fixed service time that serve
#    one request at a time (bench/InferenceStub.java PORT SERVICE_MS: at most 1000/SERVICE_MS requests/s each) and
#    Fulcrum (current build) with two models, one-replica (the first stub) and three-replicas (all three: comma-
#    separated base URLs). One stub directly, then each model through Fulcrum, loaded at B_CONNECTIONS for DURATION
#    after a WARMUP each; prints req/s, the ratio three/one (target >= 2.5) and how three-replicas' requests spread over
#    its replicas (fulcrum_upstream_attempts_total{outcome="ok"} of /q/metrics, before and after its run).
# Needs the current build: ./mvnw -B -q package -DskipTests. Written to bench/results/replicas-<date>.txt.
# Usage: bench/replicas.sh   (PARTS="A B" ROUNDS=2 BEFORE=<commit> BEFORE_DIR=target/bench-before/<commit>
#                             CONNECTION_COUNTS="32 1" DURATION=20s WARMUP=10s WARMUP_ROUNDS=3 THREADS=2
#                             SERVICE_MS=5 B_CONNECTIONS=32 JAVA_OPTS=...)
#        PARTS=B DURATION=3s WARMUP=2s bench/replicas.sh      a smoke test of part B (about a minute)
# The worktree of the build before stays for the next run; `git worktree remove --force <dir>` removes it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

PARTS=${PARTS:-A B}
ROUNDS=${ROUNDS:-2}
SERVICE_MS=${SERVICE_MS:-5}
B_CONNECTIONS=${B_CONNECTIONS:-32}
for part in $PARTS; do
  [[ $part == A || $part == B ]] || { echo "PARTS: A, B or both, not '$part'" >&2; exit 2; }
done
if [[ ! -f target/quarkus-app/quarkus-run.jar ]]; then
  echo "no target/quarkus-app/quarkus-run.jar: build the current code first with ./mvnw -B -q package -DskipTests" >&2
  exit 1
fi

unset JAR # the current build, as copied below (server-lib.sh reads JAR when Fulcrum starts)
# shellcheck source=bench/wrk-lib.sh
source bench/wrk-lib.sh
# the current build, copied (without its start-up archive, which java -jar does not use)
current_app=$work/current-app
mkdir -p "$current_app"
cp -a target/quarkus-app/app target/quarkus-app/lib target/quarkus-app/quarkus target/quarkus-app/quarkus-run.jar \
  "$current_app/"
JAR=$current_app/quarkus-run.jar
current_label="target/quarkus-app of $(date -u -r "$JAR" '+%Y-%m-%d %H:%M UTC'), HEAD $(git rev-parse --short HEAD)"
if [[ -n $(git status --porcelain -- src pom.xml) ]]; then
  current_label="$current_label, src/ or pom.xml changed since"
fi

mkdir -p bench/results
result="bench/results/replicas-$(date +%Y-%m-%d).txt"
python3 - "$load_before" >"$result" <<'PY'
import sys
sys.path.insert(0, "bench")
import wrk_results
print(wrk_results.header("Fulcrum: a model served by many replicas (issue 53)", sys.argv[1]))
PY
cat "$result"

# A: the worktree and jar of the build before (made when missing), then inference.sh on both builds in turns
before_jar() { # commit dir: prints the jar's path
  local commit=$1 tree=$2
  if [[ ! -e $tree ]]; then
    git worktree prune
    mkdir -p "$(dirname "$tree")"
    git worktree add --detach "$tree" "$commit" >&2
  fi
  if [[ ! -f $tree/.git || $(git -C "$tree" rev-parse HEAD) != "$commit" ]]; then
    echo "$tree is not a git worktree of $commit: remove it (git worktree remove --force $tree) or set BEFORE_DIR" >&2
    exit 1
  fi
  if [[ ! -f $tree/target/quarkus-app/quarkus-run.jar ]]; then
    echo "building $commit in $tree (./mvnw -B -q package -DskipTests -Dfulcrum.startup-archive.skip=true)" >&2
    (cd "$tree" && ./mvnw -B -q package -DskipTests -Dfulcrum.startup-archive.skip=true) >&2
  fi
  echo "$tree/target/quarkus-app/quarkus-run.jar"
}

part_a() {
  local before tree jar_before round build jar out written
  before=$(git rev-parse --verify "${BEFORE:-$(git merge-base HEAD a091b63)}^{commit}")
  tree=${BEFORE_DIR:-$root/target/bench-before/${before:0:12}}
  jar_before=$(before_jar "$before" "$tree")
  # inference.sh writes bench/results/inference-<date>.txt at every run: what was there before is put back after each
  mkdir -p "$work/saved-results"
  cp bench/results/inference-*.txt "$work/saved-results/" 2>/dev/null || true
  : >"$work/runs-a.txt"
  for round in $(seq "$ROUNDS"); do
    local order=(before current)
    if ((round % 2 == 0)); then order=(current before); fi
    for build in "${order[@]}"; do
      jar=$jar_before
      if [[ $build == current ]]; then jar=$JAR; fi
      out="$work/a-$build-$round.txt"
      echo "part A, round $round of $ROUNDS: $build ($jar), $(date -u +%H:%M:%S) UTC" >&2
      if ! REFERENCE=0 JAR=$jar bench/inference.sh >"$out"; then
        cat "$out"
        echo "bench/inference.sh failed on $build" >&2
        exit 1
      fi
      written=$(sed -n 's/^written to //p' "$out")
      if [[ -n $written ]]; then
        if [[ -f $work/saved-results/$(basename "$written") ]]; then
          cp "$work/saved-results/$(basename "$written")" "$written"
        else
          rm -f "$written"
        fi
      fi
      printf '%s\t%s\t%s\n' "$build" "$round" "$out" >>"$work/runs-a.txt"
    done
  done
  python3 - "$work/runs-a.txt" "$before" "$current_label" <<'PY' | tee -a "$result"
import re, statistics, sys
runs, before, current = sys.argv[1:4]

def parse(path):
    """{connections: (req/s, p50, p99, added p50, gateway CPU us/request, non-2xx)} of one inference.sh output."""
    text = open(path).read()
    rows = {}
    for m in re.finditer(r"^(\d+) connection\(s\)\n(.*?)(?=^\d+ connection\(s\)|\Z)", text, re.M | re.S):
        block = m.group(2)
        f = re.search(r"^through Fulcrum\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(-?[\d.]+)\s+(\d+)", block, re.M)
        cpu = re.search(r"^  through Fulcrum\s+([\d.]+)", block, re.M)
        rows[int(m.group(1))] = tuple(float(x) for x in f.groups()[:4]) + (
            float(cpu.group(1)) if cpu else float("nan"), int(f.group(5)))
    return rows

results = []  # (build, round, rows)
for line in open(runs):
    build, rnd, path = line.rstrip("\n").split("\t")
    results.append((build, int(rnd), parse(path)))
names = {"before": before[:10], "current": current}
print()
print("A. One replica, before and after the replica-routing change: bench/inference.sh REFERENCE=0 on each build, "
      "alternated")
for key, name in names.items():
    print(f"   {key}: {name}")
print("   added p50: Fulcrum's p50 less the same run's p50 direct to the stub; CPU: Fulcrum's CPU per request")
metrics = ["req/s", "p50 ms", "p99 ms", "added p50", "CPU us/req"]
counts = sorted({c for _, _, rows in results for c in rows}, reverse=True)
for c in counts:
    print()
    print(f"{c} connection(s)")
    print(f"{'build':<16}{'round':>6}" + "".join(f"{m:>12}" for m in metrics) + f"{'non-2xx':>9}")
    for build, rnd, rows in results:
        r = rows[c]
        print(f"{build:<16}{rnd:>6}{r[0]:>12.0f}" + "".join(f"{x:>12.3f}" for x in r[1:4]) + f"{r[4]:>12.1f}"
              + f"{r[5]:>9}")
    means = {}
    for build in names:
        values = [rows[c] for b, _, rows in results if b == build]
        means[build] = [statistics.mean(v[i] for v in values) for i in range(5)]
        spread = [(max(v[i] for v in values) - min(v[i] for v in values)) / abs(means[build][i]) * 100
                  if means[build][i] else 0 for i in range(5)]
        m = means[build]
        print(f"{'mean ' + build:<22}{m[0]:>12.0f}" + "".join(f"{x:>12.3f}" for x in m[1:4]) + f"{m[4]:>12.1f}")
        print(f"{'  rounds spread':<22}" + "".join(f"{s:>11.1f}%" for s in spread))
    diff = [(means["current"][i] - means["before"][i]) / abs(means["before"][i]) * 100 if means["before"][i] else 0
            for i in range(5)]
    print(f"{'current vs before':<22}" + "".join(f"{d:>+11.1f}%" for d in diff))
PY
}

# B: three serial stubs with a fixed service time, Fulcrum with one-replica and three-replicas
part_b() {
  local i p urls=() stub_pids=() three t=$THREADS check model
  for i in 1 2 3; do
    p=$(free_port)
    java -cp "$current_app/lib/main/*" bench/InferenceStub.java "$p" "$SERVICE_MS" serial >"$work/stub-$i.log" 2>&1 &
    stub_pids+=("$!")
    other_pids+=("$!")
    urls+=("http://127.0.0.1:$p/v1")
  done
  three=$(IFS=,; echo "${urls[*]}")
  start_fulcrum -Dfulcrum.inference.models.one-replica.base-url="${urls[0]}" \
    -Dfulcrum.inference.models.one-replica.upstream-model=echo \
    -Dfulcrum.inference.models.three-replicas.base-url="$three" \
    -Dfulcrum.inference.models.three-replicas.upstream-model=echo
  for i in 1 2 3; do
    for _ in $(seq 120); do
      grep -q "stub listening" "$work/stub-$i.log" && break
      kill -0 "${stub_pids[i - 1]}" 2>/dev/null || { cat "$work/stub-$i.log"; exit 1; }
      sleep 0.25
    done
    grep -q "stub listening" "$work/stub-$i.log" || { cat "$work/stub-$i.log"; exit 1; }
  done
  for model in one-replica three-replicas; do
    check=$(curl -s -w ' %{http_code}' -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
      -d "{\"model\": \"$model\", \"messages\": [{\"role\": \"user\", \"content\": \"Say hello.\"}]}" \
      "$base/v1/chat/completions")
    [[ $check == *" 200" ]] || { echo "$model through Fulcrum failed: $check" >&2; tail -40 "$work/fulcrum.log"; exit 1; }
  done

  ((t > B_CONNECTIONS)) && t=$B_CONNECTIONS
  loadb() { # duration url key model output
    BENCH_KEY=$3 BENCH_MODEL=$4 wrk -t"$t" -c"$B_CONNECTIONS" -d"$1" --latency -s bench/chat.lua "$2" >"$5"
  }
  echo "part B: warm-up ($WARMUP each), $(date -u +%H:%M:%S) UTC" >&2
  loadb "$WARMUP" "${urls[0]}/chat/completions" "" echo /dev/null
  loadb "$WARMUP" "$base/v1/chat/completions" "$KEY" one-replica /dev/null
  loadb "$WARMUP" "$base/v1/chat/completions" "$KEY" three-replicas /dev/null
  echo "part B: measured runs ($DURATION each), $(date -u +%H:%M:%S) UTC" >&2
  loadb "$DURATION" "${urls[0]}/chat/completions" "" echo "$work/wrk-b-direct.txt"
  loadb "$DURATION" "$base/v1/chat/completions" "$KEY" one-replica "$work/wrk-b-one.txt"
  curl -sf "$base/q/metrics" >"$work/metrics-before.txt"
  loadb "$DURATION" "$base/v1/chat/completions" "$KEY" three-replicas "$work/wrk-b-three.txt"
  curl -sf "$base/q/metrics" >"$work/metrics-after.txt"

  python3 - "$work" "$SERVICE_MS" "$B_CONNECTIONS" "$DURATION" "$WARMUP" "$t" "$current_label" "${urls[@]}" <<'PY' \
    | tee -a "$result"
import os, re, sys
sys.path.insert(0, "bench")
import wrk_results
work, service_ms, connections, duration, warmup, threads, current = sys.argv[1:8]
urls = sys.argv[8:]
capacity = 1000 / float(service_ms)

def attempts(path):
    """{(replica, outcome): count} of fulcrum_upstream_attempts_total for model three-replicas."""
    counts = {}
    for m in re.finditer(r"^fulcrum_upstream_attempts_total\{([^}]*)\}\s+(\S+)", open(path).read(), re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if labels.get("model") == "three-replicas":
            counts[(labels.get("replica"), labels.get("outcome"))] = float(m.group(2))
    return counts

print()
print(f"B. Three replicas against one when the replica is the bottleneck: stubs of {service_ms} ms a request, one at "
      f"a time (at most {capacity:.0f} req/s each); current build ({current})")
print(f"   wrk -t{threads} -c{connections} -d{duration} --latency, POST /v1/chat/completions, after {warmup} of "
      f"warm-up each; JAVA_OPTS='{os.environ.get('JAVA_OPTS', '')}'")
for i, url in enumerate(urls, 1):
    print(f"   stub {i}: {url}")
rows = [("one stub, directly", "direct"), ("one-replica", "one"), ("three-replicas", "three")]
parsed = {key: wrk_results.parse(f"{work}/wrk-b-{key}.txt") for _, key in rows}
print()
print(f"{'path':<22}{'req/s':>10}{'of capacity':>13}{'p50 ms':>10}{'p99 ms':>10}{'non-2xx':>9}  socket errors")
for label, key in rows:
    rps, p50, p99, non2xx, sock = parsed[key]
    n = 3 if key == "three" else 1
    print(f"{label:<22}{rps:>10.1f}{rps / (n * capacity):>12.0%}{p50:>10.2f}{p99:>10.2f}{non2xx:>9}  {sock}")
ratio = parsed["three"][0] / parsed["one"][0]
print(f"three-replicas / one-replica: {ratio:.2f}x (target >= 2.5x)  {'OK' if ratio >= 2.5 else 'MISSED'}")

before, after = attempts(f"{work}/metrics-before.txt"), attempts(f"{work}/metrics-after.txt")
delta = {k: after[k] - before.get(k, 0) for k in after}
ok = {replica: n for (replica, outcome), n in delta.items() if outcome == "ok"}
print()
if not ok:
    print("no fulcrum_upstream_attempts_total{model=\"three-replicas\",outcome=\"ok\"} on /q/metrics: a build "
          "without replica routing (target/quarkus-app older than the change?)")
else:
    mean = sum(ok.values()) / len(urls)
    print(f"three-replicas' requests by replica during its measured run (fulcrum_upstream_attempts_total, "
          f"outcome ok, after less before): {sum(ok.values()):.0f} in all")
    for url in urls:
        replica = re.match(r"https?://([^/]+)", url).group(1)
        n = ok.get(replica, 0)
        print(f"  {replica:<22}{n:>8.0f}{n / sum(ok.values()):>8.1%}  {(n - mean) / mean:+.1%} from the mean")
    others = {k: n for k, n in ok.items() if k not in {re.match(r"https?://([^/]+)", u).group(1) for u in urls}}
    if others:
        print(f"  other replica names: {others}")
failed = {f"{replica} {outcome}": n for (replica, outcome), n in delta.items() if outcome != "ok" and n}
print(f"attempts with another outcome: {failed if failed else 'none'}")
PY
}

for part in $PARTS; do
  "part_${part,,}"
done
echo "written to $result"
