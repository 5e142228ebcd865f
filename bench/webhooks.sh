#!/usr/bin/env bash
# Webhook delivery benchmark against the local Node receiver (bench/receiver):
#  1. throughput: FANOUT project automations on ADD_ARTIFACT_TAG, EVENTS tag events produced as fast as the API
#     takes them (each event makes FANOUT deliveries); prints deliveries received per second (first to last receipt).
#  2. latency: one automation, RATE events/s for LATENCY_SECONDS; the payload carries the event time, the receiver
#     prints event-to-receipt p50/p99 (the event time is taken in the event's transaction, just before commit).
#
#   bench/webhooks.sh [events=1000] [fanout=20] [rate=200] [latency-seconds=30]
#
# Targets (2 cores): >= 1,000 deliveries/s; p50 <= 20 ms, p99 <= 100 ms.
set -euo pipefail
EVENTS=${1:-1000}
FANOUT=${2:-20}
RATE=${3:-200}
LATENCY_SECONDS=${4:-30}
# shellcheck source=bench/webhooks-lib.sh
source "$(dirname "$0")/webhooks-lib.sh"

start_receiver
start_server
setup "$FANOUT"

# warm-up (JIT, connections)
produce 0 200 warm 0 8 > /dev/null
settle $((200 * FANOUT)) 60
curl -fs -X POST "$RECEIVER_URL/reset" > /dev/null

echo "== throughput: $EVENTS events x $FANOUT automations = $((EVENTS * FANOUT)) deliveries"
produce 0 "$EVENTS" tp 0 16
settle $((EVENTS * FANOUT)) 300
STATS=$(stats)
echo "received:             $(echo "$STATS" | json received) ($(echo "$STATS" | json duplicates) duplicates)"
echo "deliveries/s:         $(echo "$STATS" | json per_second)"

# latency: only the first automation stays enabled
IDS=$(api GET "$PROJECT_PATH/automations" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>console.log(JSON.parse(s).automations.slice(1).map(a=>a.id).join(' ')))")
for id in $IDS; do
  api PATCH "$PROJECT_PATH/automations/$id" -d '{"enabled": false}' > /dev/null
done
curl -fs -X POST "$RECEIVER_URL/reset" > /dev/null
COUNT=$((RATE * LATENCY_SECONDS))
echo "== latency: $COUNT events at $RATE/s"
produce 0 "$COUNT" lat "$RATE" 32
settle "$COUNT" 60
curl -fs "$RECEIVER_URL/stats" | node -e "let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const l=JSON.parse(s).latency_ms;console.log('event-to-receipt ms:  p50 '+l.p50+', p99 '+l.p99+', max '+l.max+' ('+l.count+' events)')})"
