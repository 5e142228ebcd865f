-- wrk script: POST the same chat completion again and again for one project (bench/fairness.sh).
-- Environment: BENCH_KEY (Bearer key), BENCH_PROJECT (team/project), BENCH_BODY (the JSON body).
wrk.method = "POST"
wrk.body = os.getenv("BENCH_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_KEY")
wrk.headers["Compat-Project"] = os.getenv("BENCH_PROJECT")
