#!/usr/bin/env bash
# Pulls a GGUF model by name from the Hugging Face Hub into a running Fulcrum and shows the download as `ollama pull`
# does (docs/inference.md, "Models by name"). The server downloads and checks the file; this only asks and watches.
#
#   scripts/pull.sh hf.co/{owner}/{repo}[:{quant}] [model id]
#
#   FULCRUM_URL       the server (http://localhost:8080)
#   FULCRUM_API_KEY   a server administrator's API key (else FULCRUM_BOOTSTRAP_API_KEY)
#   PULL_REVISION     a branch, tag or commit of the repository (main)
#
# The model id defaults to the repository's name in lower case, with the tag (smollm2-135m-instruct-gguf:q4_k_m). A
# model of that id already there is watched rather than added again (its pull started again when it had failed).
# Ctrl-C stops the watching, not the pull.
set -euo pipefail

usage() {
  sed -n '5p' "$0" | sed 's/^#  */usage: /' >&2
  exit 2
}

name=${1:-}
[[ $name =~ ^(hf\.co|huggingface\.co)/[A-Za-z0-9][A-Za-z0-9._-]*/([A-Za-z0-9][A-Za-z0-9._-]*)(:([A-Za-z0-9][A-Za-z0-9._-]*))?$ ]] || usage
repo=${BASH_REMATCH[2]}
tag=${BASH_REMATCH[4]}
id=${2:-$(printf '%s' "$repo${tag:+:$tag}" | tr '[:upper:]' '[:lower:]')}
[[ $id =~ ^[A-Za-z0-9._:/-]+$ ]] || { echo "pull.sh: choose a model id of letters, digits and ._:/-" >&2; exit 2; }
revision=${PULL_REVISION:-main}
[[ $revision =~ ^[A-Za-z0-9._/-]+$ ]] || { echo "pull.sh: PULL_REVISION is a branch, tag or commit" >&2; exit 2; }
url=${FULCRUM_URL:-http://localhost:8080}
key=${FULCRUM_API_KEY:-${FULCRUM_BOOTSTRAP_API_KEY:-}}
[[ -n $key ]] || { echo "pull.sh: set FULCRUM_API_KEY to a server administrator's API key" >&2; exit 2; }
encoded_id=${id//\//%2F}

# The value of a JSON field of the answer: a string's content, a number, or null (the first field of that name).
field() {
  local json=$1 name=$2 value
  value=$(printf '%s' "$json" | grep -oE "\"$name\"[[:space:]]*:[[:space:]]*(\"([^\"\\\\]|\\\\.)*\"|[^,}[:space:]]*)" \
    | head -n 1) || true
  value=${value#*:}
  value=${value#"${value%%[![:space:]]*}"}
  value=${value#\"}
  printf '%s' "${value%\"}"
}

request() {
  curl -sS -w '\n%{http_code}' -H "Authorization: Bearer $key" -H 'Content-Type: application/json' "$@"
}

human() {
  awk -v n="$1" 'BEGIN { split("B kB MB GB TB", u, " "); i = 1; while (n >= 1000 && i < 5) { n /= 1000; i++ }
    printf (i == 1 ? "%d %s" : "%.1f %s"), n, u[i] }'
}

answer=$(request -d "{\"id\": \"$id\", \"backend\": \"gguf\", \"pull\": \"$name\", \"revision\": \"$revision\"}" \
  "$url/api/v1/admin/models")
status=${answer##*$'\n'}
body=${answer%$'\n'*}
case $status in
  201 | 202) echo "pulling $name as model $id" ;;
  409)
    # a failed pull of that model is started again (resuming what it wrote); one under way or ready is watched
    retry=$(request -X POST -d "" "$url/api/v1/admin/models/$encoded_id/pull")
    case ${retry##*$'\n'} in
      202) echo "model $id exists and its pull had failed: pulling $name again" ;;
      409) echo "model $id exists: watching its pull" ;;
      *)
        echo "Error (${retry##*$'\n'}): $(field "${retry%$'\n'*}" detail)" >&2
        exit 1
        ;;
    esac
    ;;
  *)
    echo "Error ($status): $(field "$body" detail)" >&2
    exit 1
    ;;
esac

width=30
last_line=
while true; do
  answer=$(request "$url/api/v1/admin/models/$encoded_id")
  status=${answer##*$'\n'}
  body=${answer%$'\n'*}
  if [[ $status != 200 ]]; then
    echo >&2
    echo "Error ($status): $(field "$body" detail)" >&2
    exit 1
  fi
  state=$(field "$body" state)
  if [[ -z $state ]]; then
    echo "model $id was not pulled by name (gguf_path: $(field "$body" gguf_path))"
    exit 0
  fi
  done_bytes=$(field "$body" completed_bytes)
  total=$(field "$body" total_bytes)
  speed=$(field "$body" bytes_per_second)
  case $state in
    queued | downloading | verifying) ;;
    ready)
      printf '\r\033[K%s\n' "${last_line:-pulling $name}"
      echo "sha256 checked against the Hub's digest"
      echo "success: model $id is served from $(field "$body" gguf_path)"
      exit 0
      ;;
    failed)
      printf '\n' >&2
      echo "Error: $(field "$body" error)" >&2
      echo "(the same command again retries the pull, resuming what it wrote)" >&2
      exit 1
      ;;
    *)
      echo "pull.sh: the server answered a pull state this script does not know: $state" >&2
      exit 1
      ;;
  esac
  if [[ $total =~ ^[0-9]+$ && $total -gt 0 ]]; then
    percent=$((done_bytes * 100 / total))
    filled=$((done_bytes * width / total))
    bar=$(printf '%*s' "$filled" '' | tr ' ' '#')$(printf '%*s' $((width - filled)) '')
    line="$state ${percent}% [$bar] $(human "$done_bytes")/$(human "$total")"
    if [[ $speed =~ ^[0-9.]+$ ]] && awk -v s="$speed" 'BEGIN { exit !(s >= 1) }'; then
      eta=$(awk -v r=$((total - done_bytes)) -v s="$speed" 'BEGIN { t = int(r / s);
        if (t >= 3600) printf "%dh%02dm", t / 3600, t % 3600 / 60; else if (t >= 60) printf "%dm%02ds", t / 60, t % 60;
        else printf "%ds", t }')
      line="$line $(human "${speed%.*}")/s $eta"
    fi
  else
    line="$state"
  fi
  last_line=$line
  printf '\r\033[K%s' "$line"
  sleep 0.5
done
