#!/usr/bin/env bash
# Weave calls: ingest through the Python weave SDK's batch path (weave 0.54.0 from src/test/python/requirements.txt,
# in target/py-clients/venv, made when missing by scripts/test-venv.sh), and the p99 of
# /calls/stream_query for a filtered page (one op, trace roots, newest first, 100 calls) over SEED calls written into
# the project with SQL (1,000,000 by default). On the packaged application with its embedded PostgreSQL in a fresh
# data directory.
# Usage: bench/weave-calls.sh       (CALLS=5000 SEED=1000000 QUERIES=200 to change)
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bench/server-lib.sh
source bench/server-lib.sh
start_fulcrum

# the test suite's client venv, made when missing or stale
python=$(scripts/test-venv.sh src/test/python/requirements.txt | tail -n 1)
project=admin/weave-bench
mkdir -p bench/results
result="bench/results/weave-calls-$(date +%Y-%m-%d).txt"
pgport=$(sed -n 4p "$work/data/postgres/postmaster.pid")
sql() { psql -q -X -h 127.0.0.1 -p "$pgport" -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }

{
  echo "Fulcrum Weave calls benchmark, $(date -u +%Y-%m-%dT%H:%MZ), load before: $load_before, $(nproc) cores"
  WF_TRACE_SERVER_URL=$base WANDB_BASE_URL=$base WANDB_API_KEY=$KEY PROJECT=$project CALLS=${CALLS:-5000} \
    WEAVE_USE_SERVER_CACHE=false WEAVE_DISABLE_ANALYTICS=true "$python" bench/weave_calls.py 2>/dev/null | grep '^ingest'

  seed=${SEED:-1000000}
  started=$(date +%s.%N)
  # 10 ops (by trace); one call in 10 a trace root, the others its children; a minute apart from 2020 on
  sql -c "insert into weave_calls (project_id, id, trace_id, parent_id, op_name, started_at, ended_at, attributes,
            inputs, output, summary, wb_user_id)
          select p.id, 'seed-' || g, 'trace-' || (g / 10), case when g % 10 = 0 then null else 'seed-' || (g - g % 10) end,
                 'weave:///$project/op/op' || ((g / 10) % 10) || ':abc', timestamptz '2020-01-01' + g * interval '1 minute',
                 timestamptz '2020-01-01' + g * interval '1 minute' + interval '1 second', '{}',
                 '{\"i\": ' || g || '}', '{\"ok\": true}', '{}', 'admin'
          from projects p join entity_names e on e.entity_id = p.entity_id and e.name = 'admin'
          cross join generate_series(1, $seed) g where p.name = 'weave-bench'" >/dev/null
  sql -c "analyze weave_calls" >/dev/null
  echo "seeded $seed calls with SQL in $(echo "$(date +%s.%N) - $started" | bc) s"

  body="{\"project_id\": \"$project\", \"filter\": {\"op_names\": [\"weave:///$project/op/op0:*\"], \"trace_roots_only\": true},
         \"sort_by\": [{\"field\": \"started_at\", \"direction\": \"desc\"}], \"limit\": 100, \"offset\": 100}"
  for _ in $(seq "${QUERIES:-200}"); do
    curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
      -d "$body" "$base/calls/stream_query"
  done | sort -n | awk '{ t[NR] = $1 } END {
    printf "calls/stream_query, filtered page of 100 (op, roots, newest first, offset 100) over the seeded calls: "
    printf "%d requests, p50 %.1f ms, p99 %.1f ms, max %.1f ms\n", NR, t[int(NR*0.5)]*1000, t[int(NR*0.99)]*1000, t[NR]*1000 }'
  echo "load average after the requests: $(cut -d" " -f1-3 /proc/loadavg)"
  # the server's own statement (CallQueryStatements.read and page: the caller's access and the page in one
  # statement), run as the server runs it, a prepared statement with parameters, after enough executions for
  # PostgreSQL to settle on its plan
  prepared="prepare page(bigint, text, text, boolean, text[], text[], int, int) as
    select a.*, c.* from (select e.entity_id, m.role, p.id as project_id from entity_names e
      left join memberships m on m.entity_id = e.entity_id and m.user_id = \$1
      left join projects p on p.entity_id = e.entity_id and p.name = \$2
      where e.name = \$3) a
    left join lateral (select c.id, c.op_name, c.display_name, c.trace_id, c.parent_id, c.thread_id, c.turn_id,
        c.started_at, c.ended_at, c.exception, c.attributes, c.inputs, c.output, c.summary, c.wb_user_id, c.wb_run_id,
        c.wb_run_step, c.wb_run_step_end, c.deleted_at from weave_calls c
      where (a.role is not null or \$4) and c.project_id = a.project_id and c.deleted_at is null
        and (c.op_name = any(\$5) or c.op_name like any(\$6)) and c.parent_id is null
      order by c.started_at desc nulls last, c.id asc limit \$7 offset \$8) c on true;"
  admin=$(sql -At -c "select user_id from account_names where username = 'admin'")
  execute="execute page($admin, 'weave-bench', 'admin', true, '{}', '{weave:///$project/op/op0:%}', 100, 100)"
  echo "plan of the server's statement (explain analyze, after 10 executions):"
  sql -c "$prepared" -c '\o /dev/null' -c "$(for _ in $(seq 10); do echo "$execute;"; done)" -c '\o' \
    -c "explain analyze $execute" | sed 's/^/  /'
} | tee "$result"
