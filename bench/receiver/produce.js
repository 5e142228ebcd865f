// Produces ADD_ARTIFACT_TAG events through Fulcrum's API: PUT .../versions/{version}/tags/{prefix}{i} for i in
// [from, to). Each tag is retried until the server answers 200 (adding a tag twice records one event), so every
// tag becomes exactly one event even across a server crash.
//
//   BASE=http://localhost:8080 KEY=... VERSION_PATH=/api/v1/entities/e/projects/p/artifacts/collections/c/versions/v0
//   FROM=0 TO=5000 PREFIX=t CONCURRENCY=8 RATE=0 node produce.js
//
// RATE > 0 sends at that many events per second (steady load) instead of as fast as possible.
'use strict';
const http = require('http');

const base = new URL(process.env.BASE);
const key = process.env.KEY;
const versionPath = process.env.VERSION_PATH;
const from = Number(process.env.FROM || 0);
const to = Number(process.env.TO || 0);
const prefix = process.env.PREFIX || 't';
const concurrency = Number(process.env.CONCURRENCY || 8);
const rate = Number(process.env.RATE || 0);
const agent = new http.Agent({ keepAlive: true, maxSockets: Math.max(concurrency, 64) });

function put(i) {
  return new Promise((resolve) => {
    const req = http.request({
      host: base.hostname, port: base.port, method: 'PUT', agent,
      path: `${versionPath}/tags/${prefix}${i}`,
      headers: { Authorization: `Bearer ${key}` },
      timeout: 10000,
    }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(0));
    req.end();
  });
}

async function send(i) {
  for (let attempt = 0; ; attempt++) {
    const status = await put(i);
    if (status === 200) return;
    if (status >= 400 && status < 500) throw new Error(`tag ${prefix}${i}: HTTP ${status}`);
    await new Promise((r) => setTimeout(r, Math.min(1000, 50 * (attempt + 1))));
  }
}

async function main() {
  const started = Date.now();
  if (rate > 0) {
    const pending = [];
    for (let i = from; i < to; i++) {
      const due = started + ((i - from) * 1000) / rate;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push(send(i));
    }
    await Promise.all(pending);
  } else {
    let next = from;
    const workers = Array.from({ length: concurrency }, async () => {
      while (next < to) {
        await send(next++);
      }
    });
    await Promise.all(workers);
  }
  const seconds = (Date.now() - started) / 1000;
  console.log(`produced ${to - from} events in ${seconds.toFixed(1)} s (${Math.round((to - from) / seconds)}/s)`);
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
