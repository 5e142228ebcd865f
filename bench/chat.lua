-- wrk script: POST one small chat completion. Environment: BENCH_KEY (optional Bearer key), BENCH_MODEL.
local key = os.getenv("BENCH_KEY")
wrk.method = "POST"
wrk.body = '{"model": "' .. os.getenv("BENCH_MODEL") .. '", "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16}'
wrk.headers["Content-Type"] = "application/json"
if key and key ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. key
end
