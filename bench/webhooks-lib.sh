# Shared by webhooks.sh and webhooks-crash.sh: the packaged server on a fresh embedded PostgreSQL (loopback
# allowed as a webhook target), the Node receiver, and a team with a signing secret, a webhook to the receiver,
# a project with one artifact version, and project automations on ADD_ARTIFACT_TAG.
# shellcheck shell=bash

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
JAR="$ROOT/target/quarkus-app/quarkus-run.jar"
PORT=${BENCH_PORT:-18094}
KEY=fk_bench-webhooks-0123456789abcdef
BASE="http://localhost:$PORT"
SECRET="whsec_$(head -c 24 /dev/urandom | base64)"
TEAM=bench
PROJECT_PATH="/api/v1/entities/$TEAM/projects/hooks"
VERSION_PATH="$PROJECT_PATH/artifacts/collections/model/versions/v0"

command -v node > /dev/null || { echo "node (18+) is missing" >&2; exit 1; }
if [ ! -f "$JAR" ]; then
  (cd "$ROOT" && ./mvnw -B -q package -DskipTests)
fi
(cd "$HERE/receiver" && npm ci --silent --no-audit --no-fund > /dev/null)

DATA=$(mktemp -d /tmp/fulcrum-webhooks.XXXXXX)
SERVER=
RECEIVER=

start_server() {
  FULCRUM_DATA_DIR="$DATA" FULCRUM_BOOTSTRAP_API_KEY="$KEY" QUARKUS_HTTP_PORT="$PORT" \
    FULCRUM_WEBHOOKS_ALLOW_HTTP=true FULCRUM_WEBHOOKS_ALLOWED_NETWORKS=127.0.0.0/8 \
    FULCRUM_WEBHOOKS_LEASE="${BENCH_LEASE:-15s}" \
    java ${JAVA_OPTS:-} -jar "$JAR" >> "$DATA/server.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 1 240); do
    if curl -fs "$BASE/q/health/ready" > /dev/null 2>&1; then return 0; fi
    sleep 0.5
  done
  echo "server did not start; log:" >&2
  tail -50 "$DATA/server.log" >&2
  exit 1
}

cleanup() {
  [ -n "$SERVER" ] && kill "$SERVER" 2> /dev/null || true
  [ -n "$SERVER" ] && wait "$SERVER" 2> /dev/null || true
  [ -n "$RECEIVER" ] && kill "$RECEIVER" 2> /dev/null || true
  rm -rf "$DATA"
}
trap cleanup EXIT

start_receiver() {
  SECRET="$SECRET" PORT=0 PORT_FILE="$DATA/receiver.port" node "$HERE/receiver/receiver.js" > "$DATA/receiver.log" 2>&1 &
  RECEIVER=$!
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
