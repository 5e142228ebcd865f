// Fulcrum's datasets and objects through the official Weave TypeScript SDK, unchanged (run by WeaveNodeSdkTest).
// Env: TRACE_URL (http://host:port), HTTPS_URL (https://localhost:port, its certificate trusted through
// NODE_EXTRA_CA_CERTS), API_KEY (a member of PROJECT's entity), USERNAME (that member), VIEWER_KEY (a viewer),
// PROJECT (entity/project).
import assert from 'node:assert/strict';
import * as weave from 'weave';

const { TRACE_URL, HTTPS_URL, API_KEY, USERNAME, VIEWER_KEY, PROJECT } = process.env;

// The SDK saves a table and queries it in promises nobody awaits; when the server refuses the save, those reject
// too. The refusal itself reaches the caller through the publish promise (checked below).
const strayRejections = [];
process.on('unhandledRejection', reason => strayRejections.push(reason));

function rowOf(i) {
  return {
    id: i,
    question: `Question ${i}: what is ${i} + ${i}? ✓ ünïcødé 😀 "quoted" \\ back`,
    answer: 2 * i,
    score: i / 7,
    tiny: 1e-7 * (i + 1),
    big: 123456789012345 + i,
    flag: i % 2 === 0,
    nothing: null,
    nested: { list: [i, 'x', null, true, { deep: { v: i, s: 'ß' } }], obj: { a: { b: { c: [i, i + 0.5] } } } },
  };
}

function withoutRef(row) {
  const { __savedRef, ...rest } = row;
  return rest;
}

async function fulcrum(path, key) {
  const res = await fetch(`${TRACE_URL}${path}`, { headers: { Authorization: `Bearer ${key}` } });
  assert.equal(res.status, 200, `${path}: ${res.status} ${await res.clone().text()}`);
  return res;
}

// 1. init('entity/project') over HTTP: publish a dataset of 1,000 rows, read it back by its ref
process.env.WF_TRACE_SERVER_URL = TRACE_URL;
process.env.WANDB_API_KEY = API_KEY;
delete process.env.WANDB_BASE_URL;
await weave.init(PROJECT);
const rows = Array.from({ length: 1000 }, (_, i) => rowOf(i));
const dataset = new weave.Dataset({ name: 'qa', description: 'a thousand questions', rows });
const ref = await dataset.save();
assert.equal(ref.projectId, PROJECT);
assert.equal(ref.objectId, 'qa');
const uri = ref.uri();
assert.match(uri, new RegExp(`^weave:///${PROJECT}/object/qa:[A-Za-z0-9]{43}$`));

const read = await weave.ObjectRef.fromUri(uri).get();
assert.ok(read instanceof weave.Dataset, 'a Dataset comes back');
assert.equal(read.name, 'qa');
assert.equal(read.description, 'a thousand questions');
assert.equal(read.length, 1000);
let index = 0;
for await (const row of read) {
  assert.deepEqual(withoutRef(row), rowOf(index), `row ${index}`);
  index++;
}
assert.equal(index, 1000);

// 2. the same dataset through the v2 path: the same record
const v2 = await (await fulcrum(`/v2/${PROJECT}/datasets/qa/versions/${ref.digest}`, API_KEY)).json();
assert.equal(v2.digest, ref.digest);
assert.equal(v2.version_index, 0);
assert.equal(v2.name, 'qa');
assert.equal(v2.description, 'a thousand questions');
const tableDigest = v2.rows.split('/').pop();
assert.equal(v2.rows, `weave:///${PROJECT}/table/${tableDigest}`);
const latest = await (await fulcrum(`/v2/${PROJECT}/datasets/qa/versions/latest`, API_KEY)).json();
assert.equal(latest.digest, ref.digest);
const lines = (await (await fulcrum(`/v2/${PROJECT}/tables/${tableDigest}/rows`, API_KEY)).text()).trim().split('\n');
assert.equal(lines.length, 1000);
lines.forEach((line, i) => {
  const row = JSON.parse(line);
  assert.equal(row.original_index, i);
  assert.deepEqual(row.val, rowOf(i), `v2 row ${i}`);
});

// publishing the same content again: the same digest and version; new content: the next version
const again = await new weave.Dataset({ name: 'qa', description: 'a thousand questions', rows }).save();
assert.equal(again.digest, ref.digest);
const changed = await new weave.Dataset({ name: 'qa', description: 'changed', rows: rows.slice(0, 10) }).save();
assert.notEqual(changed.digest, ref.digest);
const v2changed = await (await fulcrum(`/v2/${PROJECT}/datasets/qa/versions/${changed.digest}`, API_KEY)).json();
assert.equal(v2changed.version_index, 1);

// 3. a non-dataset object: a prompt
const client = await weave.init(PROJECT);
const prompt = new weave.StringPrompt({ name: 'greeting', description: 'says hello', content: 'Hello, {name}!' });
const promptRef = await client.publish(prompt);
const promptBack = await weave.ObjectRef.fromUri(promptRef.uri()).get();
assert.ok(promptBack instanceof weave.StringPrompt, 'a StringPrompt comes back');
assert.equal(promptBack.format({ name: 'Fulcrum' }), 'Hello, Fulcrum!');
const plain = await client.publish({ any: ['json', 1, { x: null }] }, 'settings');
assert.deepEqual(await weave.ObjectRef.fromUri(plain.uri()).get(), { any: ['json', 1, { x: null }] });
const notDataset = await fetch(`${TRACE_URL}/v2/${PROJECT}/datasets/greeting/versions/latest`, {
  headers: { Authorization: `Bearer ${API_KEY}` },
});
assert.equal(notDataset.status, 404);

// 4. a viewer's publish is refused, and the SDK hands the refusal to the caller
process.env.WANDB_API_KEY = VIEWER_KEY;
await weave.init(PROJECT);
let refused;
try {
  await new weave.Dataset({ name: 'viewer-qa', rows: [{ a: 1 }] }).save();
} catch (error) {
  refused = error;
}
assert.ok(refused, 'the viewer publish was refused');
assert.equal(refused.status, 403);
assert.match(refused.error.detail, /member/);
// but the viewer reads
const viewed = await weave.ObjectRef.fromUri(uri).get();
assert.equal(viewed.length, 1000);

// 5. init('project') over HTTPS: the default entity comes from POST /graphql
process.env.WANDB_API_KEY = API_KEY;
process.env.WANDB_BASE_URL = HTTPS_URL;
process.env.WF_TRACE_SERVER_URL = HTTPS_URL;
const personal = await weave.init('personal-proj');
assert.equal(personal.projectId, `${USERNAME}/personal-proj`);
const small = Array.from({ length: 25 }, (_, i) => rowOf(i));
const personalRef = await new weave.Dataset({ name: 'small', rows: small }).save();
assert.equal(personalRef.projectId, `${USERNAME}/personal-proj`);
const smallBack = await weave.ObjectRef.fromUri(personalRef.uri()).get();
assert.equal(smallBack.length, 25);
assert.deepEqual(smallBack.rows.rows.map(withoutRef), Array.from({ length: 25 }, (_, i) => rowOf(i)));

await new Promise(resolve => setTimeout(resolve, 200));
for (const reason of strayRejections) {
  assert.equal(reason?.status, 403, `only the refused viewer save may reject unawaited: ${reason}`);
}
console.log('weave-sdk e2e: ok');
process.exit(0);
