#!/usr/bin/env bash
# Runs the packaged Fulcrum (target/quarkus-app, or FULCRUM_APP) with its start-up archive when there is one for this
# JDK and these jars (scripts/startup-lib.sh; the build makes it), which makes every start after the first about half
# as long; otherwise as `java -jar` does. JAVA_OPTS holds further JVM options; arguments go to Fulcrum.
#
#   scripts/run.sh                    FULCRUM_JAVA / JAVA_HOME: the JDK (else java on the PATH)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=scripts/startup-lib.sh
source "$here/startup-lib.sh"

startup_init "${FULCRUM_APP:-$here/../target/quarkus-app}"
# shellcheck disable=SC2206 # JAVA_OPTS holds several options
opts=(${JAVA_OPTS:-})
if archive_fits; then
  opts=("${use_flags[@]}" "${opts[@]}")
else
  echo "run.sh: no start-up archive of these jars for $java (scripts/startup-archive.sh makes it); starting without" >&2
fi
exec "$java" "${opts[@]}" -jar "$app/quarkus-run.jar" "$@"
