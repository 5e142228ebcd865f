// Fulcrum console: the inference playground. Posts the chat completion to the console's completion route (the session
// cookie and its CSRF token; the browser holds no API key), reads the server-sent events as they arrive and appends each
// piece of text, then shows the usage and the latency. Keeps curl and OpenAI-SDK versions of the request up to date.
(function () {
  'use strict';

  var form = document.getElementById('playground');
  if (!form) {
    return;
  }
  var $ = function (id) { return document.getElementById(id); };
  var answer = $('answer');
  var controller = null;

  function model() {
    return $('model-ref').value.trim() || $('model-list').value;
  }

  function request() {
    var messages = [];
    if ($('system').value.trim()) {
      messages.push({ role: 'system', content: $('system').value });
    }
    messages.push({ role: 'user', content: $('user').value });
    var body = { model: model(), messages: messages, stream: true, stream_options: { include_usage: true } };
    var temperature = parseFloat($('temperature').value);
    if (isFinite(temperature)) {
      body.temperature = temperature;
    }
    var max = parseInt($('max-tokens').value, 10);
    if (isFinite(max)) {
      body.max_tokens = max;
    }
    return body;
  }

  function snippets() {
    var body = request();
    var project = $('project').value.trim();
    var base = window.location.origin + '/v1';
    var json = JSON.stringify(body, null, 2);
    $('snippet-curl').textContent = 'curl ' + base + '/chat/completions \\\n' +
      '  -H "Authorization: Bearer $FULCRUM_API_KEY" \\\n' +
      '  -H "Content-Type: application/json" \\\n' +
      (project ? '  -H "Compat-Project: ' + project + '" \\\n' : '') +
      "  -d '" + json.replace(/'/g, "'\\''") + "'";
    var args = { model: body.model, messages: body.messages };
    var pyArgs = 'model=' + JSON.stringify(body.model) + ',\n    messages=' + JSON.stringify(body.messages, null, 4)
      .replace(/\n/g, '\n    ') + (body.temperature !== undefined ? ',\n    temperature=' + body.temperature : '') +
      (body.max_tokens !== undefined ? ',\n    max_tokens=' + body.max_tokens : '') + ',\n    stream=True,';
    $('snippet-python').textContent = 'import os\nfrom openai import OpenAI\n\nclient = OpenAI(\n' +
      '    base_url=' + JSON.stringify(base) + ',\n    api_key=os.environ["FULCRUM_API_KEY"],\n' +
      (project ? '    default_headers={"Compat-Project": ' + JSON.stringify(project) + '},\n' : '') +
      ')\nstream = client.chat.completions.create(\n    ' + pyArgs + '\n)\n' +
      'for chunk in stream:\n    if chunk.choices:\n        print(chunk.choices[0].delta.content or "", end="")\n';
    args.temperature = body.temperature;
    args.max_tokens = body.max_tokens;
    args.stream = true;
    $('snippet-node').textContent = 'import OpenAI from "openai";\n\nconst client = new OpenAI({\n' +
      '  baseURL: ' + JSON.stringify(base) + ',\n  apiKey: process.env.FULCRUM_API_KEY,\n' +
      (project ? '  defaultHeaders: { "Compat-Project": ' + JSON.stringify(project) + ' },\n' : '') +
      '});\nconst stream = await client.chat.completions.create(' + JSON.stringify(args, null, 2) + ');\n' +
      'for await (const chunk of stream) {\n  process.stdout.write(chunk.choices[0]?.delta?.content ?? "");\n}\n';
  }

  function showError(message) {
    var box = $('playground-error');
    box.textContent = message;
    box.hidden = false;
  }

  function done() {
    $('send').disabled = false;
    $('stop').disabled = true;
    controller = null;
  }

  form.addEventListener('input', snippets);
  form.addEventListener('change', snippets);
  $('stop').addEventListener('click', function () {
    if (controller) {
      controller.abort();
    }
  });

  form.addEventListener('submit', function (event) {
    event.preventDefault();
    var body = request();
    if (!body.model) {
      showError('Choose a model or give a checkpoint reference.');
      return;
    }
    $('playground-error').hidden = true;
    answer.textContent = '';
    answer.dataset.chunks = '0';
    answer.dataset.done = 'false';
    $('usage').textContent = '–';
    $('latency').textContent = 'waiting…';
    $('send').disabled = true;
    $('stop').disabled = false;
    controller = new AbortController();
    var headers = { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'X-CSRF-Token': form.dataset.csrf };
    if ($('project').value.trim()) {
      headers['Compat-Project'] = $('project').value.trim();
    }
    var started = performance.now();
    var first = null;
    var chunks = 0;
    fetch(form.dataset.endpoint, {
      method: 'POST', headers: headers, body: JSON.stringify(body), credentials: 'same-origin',
      signal: controller.signal
    }).then(function (response) {
      if (!response.ok) {
        return response.json().catch(function () { return {}; }).then(function (error) {
          throw new Error(response.status + ': ' + ((error.error && error.error.message) || response.statusText));
        });
      }
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = '';
      function handle(line) {
        if (line.indexOf('data:') !== 0) {
          return;
        }
        var data = line.slice(5).trim();
        if (data === '[DONE]') {
          return;
        }
        var chunk = JSON.parse(data);
        if (chunk.error) {
          showError(chunk.error.message);
          return;
        }
        var text = chunk.choices && chunk.choices[0] && chunk.choices[0].delta && chunk.choices[0].delta.content;
        if (text) {
          if (first === null) {
            first = performance.now();
          }
          answer.textContent += text;
          answer.dataset.chunks = String(++chunks);
        }
        if (chunk.usage) {
          $('usage').textContent = chunk.usage.prompt_tokens + ' prompt + ' + chunk.usage.completion_tokens +
            ' completion = ' + chunk.usage.total_tokens + ' tokens';
        }
      }
      function read() {
        return reader.read().then(function (part) {
          if (part.done) {
            return;
          }
          buffer += decoder.decode(part.value, { stream: true });
          var lines = buffer.split('\n');
          buffer = lines.pop();
          lines.forEach(handle);
          return read();
        });
      }
      return read();
    }).then(function () {
      var total = performance.now() - started;
      $('latency').textContent = (first === null ? '' : 'first token ' + Math.round(first - started) + ' ms, ') +
        'complete ' + Math.round(total) + ' ms, ' + chunks + ' chunks';
      answer.dataset.done = 'true';
      done();
    }).catch(function (error) {
      $('latency').textContent = '–';
      showError(error.name === 'AbortError' ? 'Stopped.' : error.message);
      answer.dataset.done = 'true';
      done();
    });
  });

  snippets();
}());
