// What the official Python weave SDK published, read back with the official TypeScript SDK, unchanged (run by
// WeaveCrossSdkTest after src/test/python/weave_sdk/publish_for_typescript.py).
// Env: TRACE_URL (http://host:port), API_KEY (a viewer of PROJECT's entity: reading needs no more), PROJECT
// (entity/project), URI (the dataset's ref as Python printed it), EXPECTED (the rows Python published, as JSON).
// Prints "RESULT {...}": the digests the TypeScript SDK saw, for the Java test to hold against the API's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as weave from 'weave';

const { TRACE_URL, API_KEY, PROJECT, URI, EXPECTED } = process.env;
const expected = JSON.parse(readFileSync(EXPECTED, 'utf8'));

process.env.WF_TRACE_SERVER_URL = TRACE_URL;
process.env.WANDB_API_KEY = API_KEY;
delete process.env.WANDB_BASE_URL;
await weave.init(PROJECT);

const dataset = await weave.ObjectRef.fromUri(URI).get();
assert.ok(dataset instanceof weave.Dataset, 'a Dataset comes back');
assert.equal(dataset.name, 'from-python');
assert.equal(dataset.description, 'published by the Python SDK');
assert.equal(dataset.length, expected.length);

const rowDigests = [];
let index = 0;
for await (const row of dataset) {
  const { __savedRef, ...val } = row;
  // JSON.stringify follows the objects' key order, so this also holds every key's place, at every depth
  assert.equal(JSON.stringify(val), JSON.stringify(expected[index]), `row ${index}`);
  assert.deepEqual(val, expected[index], `row ${index}`);
  const rowRef = await __savedRef;
  rowDigests.push(rowRef.rowDigest);
  index++;
}
assert.equal(index, expected.length);

const datasetRef = await dataset.__savedRef;
const tableRef = await dataset.rows.__savedRef;
console.log('RESULT ' + JSON.stringify({ digest: datasetRef.digest, table: tableRef.digest, rowDigests }));
process.exit(0);
