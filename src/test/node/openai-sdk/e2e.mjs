// Fulcrum's inference API through the official OpenAI Node SDK. Run by OpenAiNodeSdkTest (after `npm ci`) with:
// BASE_URL (<fulcrum>/v1), API_KEY, PROJECT (team/project), MODEL (an upstream model answering "Hello from upstream"),
// LIMITED_MODEL (an upstream answering 429), BUILTIN_MODEL, OTHER_PROJECT (a team the caller is not a member of),
// EMBEDDING_MODEL (the local embedding model), RESPONSES_MODEL (an upstream with the Responses API; MODEL has none).
// Exits non-zero on the first failed expectation.
import OpenAI from 'openai';

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const [baseURL, apiKey, project, model] = ['BASE_URL', 'API_KEY', 'PROJECT', 'MODEL'].map(env);
const check = (condition, message) => {
  if (!condition) throw new Error(`expectation failed: ${message}`);
};
const messages = [{ role: 'user', content: 'Hi' }];
const client = new OpenAI({ baseURL, apiKey, project, maxRetries: 0 });

async function expectError(name, errorClass, status, call) {
  try {
    await call();
  } catch (e) {
    check(e instanceof errorClass, `${name}: ${e.constructor.name} is a ${errorClass.name}`);
    check(e.status === status, `${name}: status ${e.status} is ${status}`);
    check(typeof e.error?.message === 'string', `${name}: the OpenAI error object has a message`);
    return e;
  }
  throw new Error(`${name}: no error`);
}

// the model list
const models = [];
for await (const m of client.models.list()) models.push(m);
check(models.some((m) => m.id === model), `the list holds ${model}`);
check(models.some((m) => m.id === env('BUILTIN_MODEL')), 'the list holds the built-in model');
check(models.every((m) => m.object === 'model' && m.created === 0 && m.owned_by === 'system'), 'model objects');

// a plain completion
const completion = await client.chat.completions.create({ model, messages });
check(completion.object === 'chat.completion', 'object');
check(completion.model === model, `model ${completion.model}`);
check(completion.choices[0].message.content === 'Hello from upstream', 'content');
check(completion.choices[0].finish_reason === 'stop', 'finish_reason');
check(completion.usage.total_tokens === 16, `usage ${JSON.stringify(completion.usage)}`);

// a streamed completion with usage
const stream = await client.chat.completions.create({
  model, messages, stream: true, stream_options: { include_usage: true },
});
let text = '';
let role = null;
let finish = null;
let usage = null;
const ids = new Set();
for await (const chunk of stream) {
  ids.add(chunk.id);
  if (chunk.choices.length > 0) {
    const choice = chunk.choices[0];
    role = role ?? choice.delta.role ?? null;
    text += choice.delta.content ?? '';
    finish = choice.finish_reason ?? finish;
  }
  if (chunk.usage) usage = chunk.usage;
}
check(text === 'Hello from upstream', `streamed text ${text}`);
check(role === 'assistant', 'the first delta carries the role');
check(finish === 'stop', 'the last chunk carries finish_reason');
check(ids.size === 1, 'one id for every chunk');
check(usage && usage.completion_tokens === 3 && usage.total_tokens === 14, `usage ${JSON.stringify(usage)}`);

// the built-in model, streamed
const builtin = await client.chat.completions.create({
  model: env('BUILTIN_MODEL'), messages, max_tokens: 4, seed: 1, stream: true,
});
let pieces = 0;
for await (const chunk of builtin) pieces += chunk.choices.length;
check(pieces >= 2, 'the built-in model streams');

// errors as the SDK's error classes
await expectError('401', OpenAI.AuthenticationError, 401,
  () => new OpenAI({ baseURL, apiKey: 'fk_wrong', maxRetries: 0 }).models.list());
await expectError('404', OpenAI.NotFoundError, 404,
  () => client.chat.completions.create({ model: 'no-such-model', messages }));
await expectError('429', OpenAI.RateLimitError, 429,
  () => client.chat.completions.create({ model: env('LIMITED_MODEL'), messages }));
await expectError('403', OpenAI.PermissionDeniedError, 403,
  () => new OpenAI({ baseURL, apiKey, project: env('OTHER_PROJECT'), maxRetries: 0 })
    .chat.completions.create({ model, messages }));
await expectError('400', OpenAI.BadRequestError, 400,
  () => client.chat.completions.create({ model, messages, n: 0 }));

// text completions: the built-in model plain and streamed (the same seed, the same text), and an upstream
const tiny = env('BUILTIN_MODEL');
const textCompletion = await client.completions.create({ model: tiny, prompt: 'Once upon a time', max_tokens: 8, seed: 7 });
check(textCompletion.object === 'text_completion' && textCompletion.model === tiny, 'text_completion object');
let continued = '';
for await (const chunk of await client.completions.create({
  model: tiny, prompt: 'Once upon a time', max_tokens: 8, seed: 7, stream: true,
})) continued += chunk.choices[0]?.text ?? '';
check(continued === textCompletion.choices[0].text, `streamed ${continued} == plain ${textCompletion.choices[0].text}`);
const upstreamText = await client.completions.create({ model, prompt: 'Hi' });
check(upstreamText.choices[0].text === 'Hello from upstream', 'upstream text completion');

// embeddings of two inputs (the SDK asks for base64 and decodes it), and floats
const embedder = env('EMBEDDING_MODEL');
const pair = ['The cat sits on the mat.', 'A cat is sitting on a rug.'];
const vectors = await client.embeddings.create({ model: embedder, input: pair });
check(vectors.data.length === 2 && vectors.data[0].embedding.length === 384, 'two 384-dimensional vectors');
const floats = await client.embeddings.create({ model: embedder, input: pair, encoding_format: 'float' });
check(floats.data[1].embedding.every((x, i) => Math.abs(x - vectors.data[1].embedding[i]) < 1e-6), 'base64 = float');
const cosine = (a, b) => a.reduce((s, x, i) => s + x * b[i], 0);
const unrelated = (await client.embeddings.create({ model: embedder, input: 'Quarterly interest rates rose sharply.' }))
  .data[0].embedding;
check(cosine(vectors.data[0].embedding, vectors.data[1].embedding) > cosine(vectors.data[0].embedding, unrelated) + 0.3,
  'paraphrases closer than an unrelated sentence');
const upstreamVectors = await client.embeddings.create({ model, input: ['a', 'b'], encoding_format: 'float' });
check(JSON.stringify(upstreamVectors.data.map((d) => d.embedding)) === '[[0,0.5],[1,0.5]]', 'upstream vectors');

// responses: the built-in model through the bridge, plain and streamed; upstreams bridged and passed through
const response = await client.responses.create({ model: tiny, input: 'Hi', max_output_tokens: 16, temperature: 0 });
check(response.object === 'response' && response.model === tiny, 'response object');
let deltas = '';
const types = [];
for await (const event of await client.responses.create({
  model: tiny, input: 'Hi', max_output_tokens: 16, temperature: 0, stream: true,
})) {
  types.push(event.type);
  if (event.type === 'response.output_text.delta') deltas += event.delta;
}
check(types[0] === 'response.created', `first event ${types[0]}`);
check(deltas === response.output_text, `streamed ${deltas} == plain ${response.output_text}`);
for (const m of [model, env('RESPONSES_MODEL')]) {
  const answer = await client.responses.create({ model: m, input: [{ role: 'user', content: 'Hi' }] });
  check(answer.output_text === 'Hello from upstream', `${m}: ${answer.output_text}`);
  let streamedText = '';
  for await (const event of await client.responses.create({ model: m, input: 'Hi', stream: true })) {
    if (event.type === 'response.output_text.delta') streamedText += event.delta;
  }
  check(streamedText === 'Hello from upstream', `${m} streamed: ${streamedText}`);
}
await expectError('stateless responses', OpenAI.BadRequestError, 400,
  () => client.responses.create({ model: tiny, input: 'Hi', previous_response_id: 'resp_1' }));

console.log('openai-node e2e: ok');
