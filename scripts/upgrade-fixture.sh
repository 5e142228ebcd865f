#!/usr/bin/env bash
# Makes the upgrade fixture of UpgradeIT (src/test/resources/upgrade/): the whole data directory of an earlier release,
# written by that release's own jar, as a single-node user has it when they upgrade.
#
#   scripts/upgrade-fixture.sh <commit>
#
# Builds <commit> in a temporary git worktree (./mvnw -B -o -q package -DskipTests), starts its jar on a fresh data
# directory (embedded PostgreSQL 18), fills one of every kind of record through the API (scripts/upgrade_fixture.py:
# users, teams, keys, secrets, a webhook, automations of each event with their deliveries, datasets, Weave objects,
# calls and feedback, artifacts with files, aliases, tags and registry links, a run with history, catalog models,
# usage, training models with SFT and RL jobs and their checkpoints, one of them trained through the worker protocol),
# stops it with SIGTERM (so PostgreSQL shuts down cleanly) and writes
#
#   data-dir.tar.xz   the data directory without models/ (the built-in model's weights, written again on first use)
#   fixture.json      what was made: names, ids, keys, digests, expected values, and the commit
#
# Regenerate it only when the earlier release should change (docs/contributing.md, "Migrations and the upgrade fixture"). Needs java,
# python3, curl, tar and xz; the commit's Maven dependencies in ~/.m2 (offline build). FIXTURE_PORT and
# FIXTURE_RECEIVER_PORT choose the server's and the webhook receiver's ports (18431, 18432); the fixture's webhook
# keeps pointing at that receiver, and UpgradeIT points it at its own through the API before firing an automation.
#
# The fixture in the repository is made from 55f47a6 (2026-11-26, the merge of that round's gguf branch): the last
# commit before the V80 migration, so today's build applies every later migration (V80 to the newest) to it; older
# commits lack kinds of record above (Weave calls and feedback came with V77 the same morning, blob MD5s with V78).
set -euo pipefail

commit=${1:?usage: scripts/upgrade-fixture.sh <commit>}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
out=$repo/src/test/resources/upgrade
port=${FIXTURE_PORT:-18431}
receiver=${FIXTURE_RECEIVER_PORT:-18432}
key=fk_upgrade-fixture-admin-0123456789

work=$(mktemp -d "${TMPDIR:-/tmp}/upgrade-fixture.XXXXXX")
tree=$work/tree
data=$work/data
pid=
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    wait "$pid" || true
  fi
  git -C "$repo" worktree remove --force "$tree" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

sha=$(git -C "$repo" rev-parse --verify "$commit^{commit}")
echo "upgrade-fixture: building $sha in $tree" >&2
git -C "$repo" worktree add --detach "$tree" "$sha" >/dev/null
(cd "$tree" && ./mvnw -B -o -q package -DskipTests >"$work/build.log" 2>&1) || {
  tail -50 "$work/build.log" >&2
  exit 1
}

# That commit has no start-up archive (scripts/run.sh came later): a plain java -jar start, as its users started it.
mkdir -p "$data"
env FULCRUM_DATA_DIR="$data" FULCRUM_BOOTSTRAP_API_KEY="$key" \
  QUARKUS_HTTP_HOST=127.0.0.1 QUARKUS_HTTP_PORT="$port" \
  FULCRUM_WEBHOOKS_ALLOW_HTTP=true FULCRUM_WEBHOOKS_ALLOWED_NETWORKS=127.0.0.0/8 \
  FULCRUM_TRAINING_WORKER_BASE_MODELS=upgrade/worker-base \
  java -Xmx512m -jar "$tree/target/quarkus-app/quarkus-run.jar" >"$work/fulcrum.log" 2>&1 &
pid=$!
for _ in $(seq 120); do
  curl -sf "http://127.0.0.1:$port/q/health/ready" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 1
done
curl -sf "http://127.0.0.1:$port/q/health/ready" >/dev/null || {
  tail -50 "$work/fulcrum.log" >&2
  exit 1
}
schema=$(curl -sf "http://127.0.0.1:$port/q/health/started" | python3 -c \
  'import json, sys; print(next(c["data"]["schema_version"] for c in json.load(sys.stdin)["checks"] if c["name"] == "Database migrated"))')

echo "upgrade-fixture: filling it (schema version $schema)" >&2
python3 "$here/upgrade_fixture.py" "http://127.0.0.1:$port" "$key" "$receiver" "$work/made.json"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
if [[ $status -ne 0 && $status -ne 143 ]]; then
  echo "upgrade-fixture: Fulcrum exited with $status" >&2
  exit 1
fi
if [[ -e $data/postgres/postmaster.pid ]]; then
  echo "upgrade-fixture: PostgreSQL was not shut down cleanly" >&2
  exit 1
fi

mkdir -p "$out"
tar -C "$data" --exclude=./models --sort=name -cf - . | xz -9e -T1 >"$out/data-dir.tar.xz"
python3 - "$work/made.json" "$out/fixture.json" "$sha" "$schema" <<'EOF'
import json
import sys

made = json.load(open(sys.argv[1], encoding="utf-8"))
made["commit"] = sys.argv[3]
made["schema_version"] = sys.argv[4]
with open(sys.argv[2], "w", encoding="utf-8") as file:
    json.dump(made, file, indent=2, sort_keys=True)
    file.write("\n")
EOF
echo "upgrade-fixture: wrote $out ($(du -h "$out/data-dir.tar.xz" | cut -f1))" >&2
