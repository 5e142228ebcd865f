// The official OpenAI Node SDK against a GGUF model served by llama.cpp inside Fulcrum. Run by GgufCompletionsTest
// (after `npm ci`) with: BASE_URL (<fulcrum>/v1), API_KEY, PROJECT (team/project), MODEL (the tiny random Llama of
// `fulcrum-worker make-tiny-model --gguf`: its text is noise, so the checks are about the API's behaviour).
// Prints "openai-node gguf e2e: ok" at the end; exits non-zero on the first failed expectation.
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
const messages = [{ role: 'user', content: 'What is the capital of France?' }];
const client = new OpenAI({ baseURL, apiKey, project, maxRetries: 0 });

// chat, greedy: plain, then streamed to the same text, with usage
const plain = await client.chat.completions.create({ model, messages, max_tokens: 16, temperature: 0 });
const answer = plain.choices[0].message.content;
check(typeof answer === 'string' && answer.length > 0, `an answer: ${JSON.stringify(plain)}`);
check(plain.usage.prompt_tokens > 5 && plain.usage.completion_tokens > 0, `usage ${JSON.stringify(plain.usage)}`);
let streamed = '';
let pieces = 0;
let usage = null;
for await (const chunk of await client.chat.completions.create({
  model, messages, max_tokens: 16, temperature: 0, stream: true, stream_options: { include_usage: true },
})) {
  if (chunk.usage) usage = chunk.usage;
  for (const choice of chunk.choices) {
    if (choice.delta.content) {
      streamed += choice.delta.content;
      pieces += 1;
    }
  }
}
check(streamed === answer && pieces > 1, `streamed ${JSON.stringify(streamed)} == ${JSON.stringify(answer)}`);
check(usage && usage.prompt_tokens === plain.usage.prompt_tokens, `stream usage ${JSON.stringify(usage)}`);

// a json_schema answer parses and matches its schema
const schema = {
  type: 'object',
  properties: { answer: { type: 'string', enum: ['yes', 'no'] }, score: { type: 'integer', minimum: 0, maximum: 9 } },
  required: ['answer', 'score'],
  additionalProperties: false,
};
for (const seed of [1, 2, 3]) {
  const json = await client.chat.completions.create({
    model, messages, temperature: 1, seed, max_tokens: 200,
    response_format: { type: 'json_schema', json_schema: { name: 'verdict', schema, strict: true } },
  });
  const value = JSON.parse(json.choices[0].message.content);
  check(Object.keys(value).sort().join() === 'answer,score', `keys of ${JSON.stringify(value)}`);
  check(['yes', 'no'].includes(value.answer) && Number.isInteger(value.score) && value.score >= 0 && value.score <= 9,
    `values of ${JSON.stringify(value)}`);
}

// a forced tool call: its arguments match the tool's schema
const tools = [{
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string', enum: ['Paris', 'Lima'] } },
      required: ['city'],
      additionalProperties: false,
    },
  },
}];
const called = await client.chat.completions.create({
  model, messages, tools, tool_choice: { type: 'function', function: { name: 'get_weather' } }, max_tokens: 200,
  temperature: 0,
});
check(called.choices[0].finish_reason === 'tool_calls', `finish ${called.choices[0].finish_reason}`);
const call = called.choices[0].message.tool_calls[0];
check(call.type === 'function' && call.function.name === 'get_weather' && call.id, `call ${JSON.stringify(call)}`);
check(['Paris', 'Lima'].includes(JSON.parse(call.function.arguments).city), `arguments ${call.function.arguments}`);

// text completions, plain and streamed: the same greedy text
const text = await client.completions.create({ model, prompt: 'Once upon a time', max_tokens: 8, temperature: 0 });
check(text.object === 'text_completion' && text.choices[0].text.length > 0, `text ${JSON.stringify(text)}`);
let continued = '';
for await (const chunk of await client.completions.create({
  model, prompt: 'Once upon a time', max_tokens: 8, temperature: 0, stream: true,
})) {
  continued += chunk.choices.map((c) => c.text).join('');
}
check(continued === text.choices[0].text, `streamed ${continued} == plain ${text.choices[0].text}`);

// embeddings of two inputs (the SDK asks for base64 and decodes it), and floats: the same unit vectors
const pair = ['The cat sat on the mat.', 'A dog barked at the mailman.'];
const vectors = await client.embeddings.create({ model, input: pair });
const floats = await client.embeddings.create({ model, input: pair, encoding_format: 'float' });
check(vectors.data.length === 2 && vectors.data[0].embedding.length > 0, 'two vectors');
check(vectors.data.every((d, i) => d.embedding.every((x, k) => Math.abs(x - floats.data[i].embedding[k]) < 1e-6)),
  'base64 and float vectors agree');
const norm = Math.sqrt(vectors.data[0].embedding.reduce((sum, x) => sum + x * x, 0));
check(Math.abs(norm - 1) < 1e-3, `unit vectors (${norm})`);
check(vectors.usage.prompt_tokens > 2 && vectors.usage.total_tokens === vectors.usage.prompt_tokens,
  `embedding usage ${JSON.stringify(vectors.usage)}`);

// responses through the bridge, plain and streamed: the same greedy text
const response = await client.responses.create({ model, input: 'Hi', max_output_tokens: 16, temperature: 0 });
check(response.status === 'completed' || response.status === 'incomplete', `status ${response.status}`);
check(response.output_text.length > 0, `output ${JSON.stringify(response.output)}`);
let deltas = '';
for await (const event of await client.responses.create({
  model, input: 'Hi', max_output_tokens: 16, temperature: 0, stream: true,
})) {
  if (event.type === 'response.output_text.delta') deltas += event.delta;
}
check(deltas === response.output_text, `streamed ${deltas} == plain ${response.output_text}`);

console.log('openai-node gguf e2e: ok');
