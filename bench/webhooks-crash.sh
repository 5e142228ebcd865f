#!/usr/bin/env bash
# Crash test of webhook delivery: starts the packaged server on a fresh embedded PostgreSQL and the Node receiver
# (bench/receiver, verifying Standard Webhooks signatures), makes a project automation on ADD_ARTIFACT_TAG, produces
# EVENTS tag events through the API, SIGKILLs the server when about 40 % of them were received, restarts it on the
# same data directory (the producer retries while it is down), waits until the deliveries settle, and reports.
#
#   bench/webhooks-crash.sh [events]        (default 5000; needs java 17, node 18+, curl)
#
# Pass: unique webhook-ids = events produced; duplicates are allowed (delivery is at least once) and reported.
set -euo pipefail
EVENTS=${1:-5000}
# shellcheck source=bench/webhooks-lib.sh
source "$(dirname "$0")/webhooks-lib.sh"

start_receiver
start_server
setup 1
curl -fs -X POST "$RECEIVER_URL/reset" > /dev/null

produce 0 "$EVENTS" t &
PRODUCER=$!
KILL_AT=$((EVENTS * 2 / 5))
while [ "$(stats | json unique)" -lt "$KILL_AT" ]; do
  kill -0 "$PRODUCER" 2> /dev/null || break
  sleep 0.05
done
echo "SIGKILL at $(stats | json unique) received"
kill_fulcrum
start_server
echo "restarted"
wait "$PRODUCER"
settle "$EVENTS" "${BENCH_SETTLE_SECONDS:-240}"

PRODUCED=$(api GET "$VERSION_PATH" | json tags)
STATS=$(stats)
UNIQUE=$(echo "$STATS" | json unique)
echo "events produced:        $PRODUCED"
echo "unique webhook-ids:     $UNIQUE"
echo "duplicates:             $(echo "$STATS" | json duplicates)"
echo "signature failures:     $(echo "$STATS" | json signature_failures)"
if [ "$UNIQUE" = "$PRODUCED" ] && [ "$PRODUCED" = "$EVENTS" ]; then
  echo "PASS: every event was delivered"
else
  echo "FAIL: $PRODUCED events, $UNIQUE delivered"
  exit 1
fi
