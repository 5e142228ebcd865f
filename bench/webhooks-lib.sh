# Shared by webhooks.sh and webhooks-crash.sh: the packaged server on a fresh embedded PostgreSQL (loopback
# allowed as a webhook target), the Node receiver, and a team with a signing secret, a webhook to the receiver,
# a project with one artifact version, and project automations on ADD_ARTIFACT_TAG.
# shellcheck shell=bash

# shellcheck source=bench/server-lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/server-lib.sh"
HERE=$BENCH_DIR
BASE=$base
DATA=$work
SECRET="whsec_$(head -c 24 /dev/urandom | base64)"
TEAM=bench
PROJECT_PATH="/api/v1/entities/$TEAM/projects/hooks"
VERSION_PATH="$PROJECT_PATH/artifacts/collections/model/versions/v0"

command -v node > /dev/null || { echo "node (18+) is missing" >&2; exit 1; }
(cd "$HERE/receiver" && npm ci --silent --no-audit --no-fund > /dev/null)


# the server with loopback allowed as a webhook target (the receiver) and a short lease, for the crash test; the lease
# must outlast an attempt (the request timeout, 5 s here as the local receiver answers at once) and its outcome's write,
# or the server refuses to start (with the default 15 s timeout, a 15 s lease had every delivery wait for it to end)
start_server() {
  FULCRUM_WEBHOOKS_ALLOW_HTTP=true FULCRUM_WEBHOOKS_ALLOWED_NETWORKS=127.0.0.0/8 \
    FULCRUM_WEBHOOKS_REQUEST_TIMEOUT="${BENCH_REQUEST_TIMEOUT:-5s}" FULCRUM_WEBHOOKS_LEASE="${BENCH_LEASE:-15s}" \
    start_fulcrum
}

start_receiver() {
  SECRET="$SECRET" PORT=0 PORT_FILE="$DATA/receiver.port" node "$HERE/receiver/receiver.js" > "$DATA/receiver.log" 2>&1 &
  other_pids+=($!)
  for _ in $(seq 1 50); do
    [ -s "$DATA/receiver.port" ] && break
    sleep 0.1
  done
  RECEIVER_URL="http://127.0.0.1:$(cat "$DATA/receiver.port")"
}

api() { # method path [json body]: prints the response, fails on an error status
  local method=$1 path=$2
  shift 2
  curl -fsS -X "$method" -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' "$@" "$BASE$path"
}

json() { # field: reads JSON on stdin, prints one top-level field
  node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const v=JSON.parse(s)['$1'];console.log(Array.isArray(v)?v.length:v)})"
}

stats() { curl -fs "$RECEIVER_URL/stats"; }

# setup AUTOMATIONS: the team, its secret and webhook, the project with version v0, and that many automations
setup() {
  api POST /api/v1/teams -d "{\"name\": \"$TEAM\"}" > /dev/null
  api POST "/api/v1/teams/$TEAM/secrets" -d "{\"name\": \"SIGNING\", \"value\": \"$SECRET\"}" > /dev/null
  WEBHOOK=$(api POST "/api/v1/teams/$TEAM/webhooks" \
    -d "{\"name\": \"receiver\", \"url\": \"$RECEIVER_URL/hook\", \"signing_secret\": \"SIGNING\"}" | json id)
  api POST "$PROJECT_PATH/runs" -d '{"name": "setup"}' > /dev/null
  echo "weights" > "$DATA/model.txt"
  curl -fsS -o /dev/null -H "Authorization: Bearer $KEY" -F "file=@$DATA/model.txt" -F type=model \
    "$BASE$PROJECT_PATH/artifacts/collections/model/versions"
  for i in $(seq 1 "$1"); do
    api POST "$PROJECT_PATH/automations" -d "{\"name\": \"tag-$i\", \"event\": \"ADD_ARTIFACT_TAG\", \"team\": \"$TEAM\",
      \"action_type\": \"Webhooks\", \"webhook_id\": $WEBHOOK,
      \"payload\": \"{\\\"tag\\\": \\\"\${tag}\\\", \\\"t\\\": \\\"\${event_time}\\\"}\"}" > /dev/null
  done
}

produce() { # from to prefix [rate] [concurrency]
  BASE="$BASE" KEY="$KEY" VERSION_PATH="$VERSION_PATH" FROM="$1" TO="$2" PREFIX="$3" RATE="${4:-0}" \
    CONCURRENCY="${5:-8}" node "$HERE/receiver/produce.js"
}

# settle EXPECTED TIMEOUT: waits until the receiver has EXPECTED unique ids and nothing changed for 3 s
settle() {
  local expected=$1 deadline=$((SECONDS + $2)) last="" same=0
  while [ $SECONDS -lt $deadline ]; do
    local now
    now=$(stats | json unique)
    if [ "$now" = "$last" ]; then same=$((same + 1)); else same=0; fi
    last=$now
    if [ "$now" -ge "$expected" ] && [ $same -ge 6 ]; then return 0; fi
    sleep 0.5
  done
  return 0
}
