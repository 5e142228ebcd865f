// A webhook endpoint for the benchmarks: verifies each request's Standard Webhooks signature (webhook-id,
// webhook-timestamp, webhook-signature) with the standardwebhooks library, counts unique webhook-ids, duplicates
// and signature failures, and measures the latency from the payload's "t" (the event time, ISO-8601) to receipt.
//
//   SECRET=whsec_... PORT=0 PORT_FILE=/tmp/port node receiver.js
//
// GET /stats answers the figures as JSON; POST /reset clears them.
'use strict';
const http = require('http');
const fs = require('fs');
const { Webhook } = require('standardwebhooks');

const secret = process.env.SECRET;
if (!secret) {
  console.error('SECRET (whsec_...) is required');
  process.exit(2);
}
const verifier = new Webhook(secret);

let stats;
function reset() {
  stats = { received: 0, ids: new Set(), duplicates: 0, signatureFailures: 0, first: 0, last: 0, latencies: [] };
}
reset();

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    const sorted = Float64Array.from(stats.latencies).sort();
    const span = stats.last - stats.first;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({
      received: stats.received,
      unique: stats.ids.size,
      duplicates: stats.duplicates,
      signature_failures: stats.signatureFailures,
      span_ms: span,
      per_second: span > 0 ? Math.round(((stats.received - 1) * 1000) / span) : null,
      latency_ms: { count: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: percentile(sorted, 100) },
    }));
    return;
  }
  if (req.method === 'POST' && req.url === '/reset') {
    reset();
    res.end('{}');
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    const body = Buffer.concat(chunks).toString('utf8');
    try {
      verifier.verify(body, req.headers);
    } catch (e) {
      stats.signatureFailures++;
      res.statusCode = 400;
      res.end();
      return;
    }
    stats.received++;
    if (stats.first === 0) stats.first = now;
    stats.last = now;
    const id = req.headers['webhook-id'];
    if (stats.ids.has(id)) {
      stats.duplicates++;
    } else {
      stats.ids.add(id);
    }
    try {
      const t = JSON.parse(body).t;
      if (t) stats.latencies.push(now - Date.parse(t));
    } catch (e) {
      // a body without "t" counts, it just has no latency
    }
    res.statusCode = 204;
    res.end();
  });
});
server.keepAliveTimeout = 60000;
server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  const port = server.address().port;
  if (process.env.PORT_FILE) fs.writeFileSync(process.env.PORT_FILE, String(port));
  console.log(`receiver on 127.0.0.1:${port}`);
});
