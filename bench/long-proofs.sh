#!/usr/bin/env bash
# The long proofs (the JUnit tag long-proof, src/test/java/dev/fulcrum/support/LongProof.java): tests of a minute or
# so that `./mvnw -B verify` leaves out to stay under 35 minutes on 2 cores, each with the shorter tests of the test
# command that reach the same capability named beside it. Runs them alone (unit and @QuarkusTest ones by surefire,
# *IT ones by failsafe against the packaged jar), with the same prerequisites as the test command.
# Usage: bench/long-proofs.sh            (extra Maven arguments are passed on, e.g. -Dit.test=StartupArchiveIT)
set -euo pipefail
cd "$(dirname "$0")/.."
exec ./mvnw -B verify -Dgroups=long-proof -DexcludedTestGroups=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dfailsafe.failIfNoSpecifiedTests=false "$@"
