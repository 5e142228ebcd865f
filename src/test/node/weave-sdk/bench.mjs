// Publishes and reads back a dataset of ROWS rows (default 10,000) through the official Weave SDK, RUNS times with
// distinct content, and prints the time of each (run by bench/weave.sh).
// Env: WF_TRACE_SERVER_URL, WANDB_API_KEY, PROJECT (entity/project), ROWS, RUNS.
import assert from 'node:assert/strict';
import * as weave from 'weave';

const rowsPerDataset = Number(process.env.ROWS || 10000);
const runs = Number(process.env.RUNS || 3);
await weave.init(process.env.PROJECT);

const seconds = start => (Number(process.hrtime.bigint() - start) / 1e9).toFixed(2);
for (let run = 0; run < runs; run++) {
  const rows = Array.from({ length: rowsPerDataset }, (_, i) => ({
    id: i,
    question: `run ${run} question ${i}: what is ${i} + ${i}?`,
    answer: String(2 * i),
    tags: ['bench', `run-${run}`],
    score: i / 7,
  }));
  let start = process.hrtime.bigint();
  const ref = await new weave.Dataset({ name: `bench-${run}`, rows }).save();
  const publish = seconds(start);
  start = process.hrtime.bigint();
  const back = await weave.ObjectRef.fromUri(ref.uri()).get();
  const read = seconds(start);
  assert.equal(back.length, rowsPerDataset);
  assert.equal(back.getRow(rowsPerDataset - 1).question, rows[rowsPerDataset - 1].question);
  console.log(`run ${run}: publish ${rowsPerDataset} rows ${publish} s, read back ${read} s`);
}
process.exit(0);
