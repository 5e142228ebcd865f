#!/usr/bin/env bash
# Lints the OpenAPI contracts with Spectral (rules in .spectral.yaml); any warning fails.
set -euo pipefail
cd "$(dirname "$0")/.."
exec npx -y @stoplight/spectral-cli@6 lint openapi/*.yaml --ruleset .spectral.yaml --fail-severity=warn
