-- wrk script: POST one embeddings request. Environment: BENCH_KEY (Bearer key), BENCH_MODEL, BENCH_INPUTS (texts per
-- request, default 1), BENCH_FORMAT (float or base64, default float).
local key = os.getenv("BENCH_KEY")
local inputs = tonumber(os.getenv("BENCH_INPUTS") or "1")
local texts = {}
for i = 1, inputs do
  texts[i] = '"A short sentence to embed, number ' .. i .. ', about the weather at sea."'
end
wrk.method = "POST"
wrk.body = '{"model": "' .. os.getenv("BENCH_MODEL") .. '", "input": [' .. table.concat(texts, ",") ..
  '], "encoding_format": "' .. (os.getenv("BENCH_FORMAT") or "float") .. '"}'
wrk.headers["Content-Type"] = "application/json"
if key and key ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. key
end
