// Fulcrum's inference API through the official OpenAI Node SDK. Run by OpenAiNodeSdkTest (after `npm ci`) with:
// BASE_URL (<fulcrum>/v1), API_KEY, PROJECT (team/project), MODEL (an upstream model answering "Hello from upstream"),
// LIMITED_MODEL (an upstream answering 429), BUILTIN_MODEL, OTHER_PROJECT (a team the caller is not a member of).
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

console.log('openai-node e2e: ok');
