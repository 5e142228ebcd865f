-- wrk script: POSTs batches of metric rows round-robin to the runs bench-0 .. bench-(RUNS-1).
-- Environment: FULCRUM_KEY, BENCH_PROJECT ("{entity}/projects/{project}"), BENCH_RUNS, BENCH_ROWS, BENCH_KEYS.
local key = os.getenv("FULCRUM_KEY")
local project = os.getenv("BENCH_PROJECT")
local runs = tonumber(os.getenv("BENCH_RUNS"))
local rows = tonumber(os.getenv("BENCH_ROWS"))
local keys = tonumber(os.getenv("BENCH_KEYS"))

local parts = {}
for r = 1, rows do
  local fields = {}
  for k = 1, keys do
    fields[#fields + 1] = string.format('"m%d": %.6f', k, (r * k) / 1000.0)
  end
  parts[#parts + 1] = "{" .. table.concat(fields, ", ") .. "}"
end
local body = "[" .. table.concat(parts, ",") .. "]"
local counter = 0

wrk.method = "POST"
wrk.body = body
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. key

request = function()
  counter = counter + 1
  local path = "/api/v1/entities/" .. project .. "/runs/bench-" .. (counter % runs) .. "/history"
  return wrk.format(nil, path)
end

local failures = 0
response = function(status, headers, body)
  if status ~= 200 then
    failures = failures + 1
    if failures < 3 then
      io.stderr:write("status " .. status .. ": " .. body .. "\n")
    end
  end
end

done = function(summary, latency, requests)
  local values = rows * keys
  local seconds = summary.duration / 1e6
  local ok = summary.requests - summary.errors.status - summary.errors.connect - summary.errors.read
      - summary.errors.write - summary.errors.timeout
  io.write(string.format("requests: %d (%d non-2xx), %d rows x %d metrics per request\n", summary.requests,
      summary.errors.status, rows, keys))
  io.write(string.format("metric values/s ingested: %.0f\n", ok * values / seconds))
  io.write(string.format("latency p50 %.1f ms, p99 %.1f ms\n", latency:percentile(50) / 1000,
      latency:percentile(99) / 1000))
end
