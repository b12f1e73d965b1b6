// How many watching pages one ply-web holds: opens more and more event streams (what a watching
// browser keeps open) on a live bot-vs-bot match and measures, for every move each stream
// receives, the time from the move's commit in the lobby to its arrival here. Stops at the first
// step whose p99 passes the limit, or that fails to connect, or at the largest step.
//
//   node tests/web/sse-load.mjs [--web http://127.0.0.1:8080] [--steps 250,500,1000,2000]
//                               [--seconds 10] [--limit-ms 100]
//
// Loopback only, bounded in time (about steps x (seconds + 5) seconds). ply-web needs
// --threads above the largest step (each open stream holds a connection thread) and
// --client_streams=0 and --client_connections=0 (the streams all come from one address).
import http from 'node:http';

const opts = { web: 'http://127.0.0.1:8080', steps: '250,500,1000,2000', seconds: '10', 'limit-ms': '100' };
for (let i = 2; i < process.argv.length; i += 2) opts[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const url = new URL(opts.web);
if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
  console.error('sse-load: loopback only');
  process.exit(2);
}
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

function request(method, path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, path, method, agent,
      headers: body ? { 'Content-Type': 'application/json' } : {} }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => (res.statusCode < 300 ? resolve(JSON.parse(text)) : reject(new Error(text))));
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

// One watching page: the stream of match `id`; every move's delay goes into `delays`.
function watch(id, delays, failures) {
  return new Promise((resolve) => {
    const req = http.get({ host: url.hostname, port: url.port, path: `/api/matches/${id}/events`, agent }, (res) => {
      if (res.statusCode !== 200) {
        failures.count++;
        res.resume();
        return resolve(null);
      }
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        const now = Date.now();
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!event.includes('event: move')) continue;
          // The move's commit time; the first time_ms of the event is the move's.
          const commit = /"time_ms":(\d+)/.exec(event);
          if (commit) delays.push(now - Number(commit[1]));
        }
      });
      res.on('error', () => {});
      resolve(req);
    });
    req.on('error', () => { failures.count++; resolve(null); });
  });
}

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

async function step(n) {
  const created = await request('POST', '/api/matches', {
    game: 'reversi', seats: [{ bot: true, level: 'easy' }, { bot: true, level: 'easy' }] });
  const id = created.match.id;
  const delays = [];
  const failures = { count: 0 };
  const streams = [];
  // In batches: the listener's accept queue is short.
  for (let i = 0; i < n; i += 100) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 100); j++) batch.push(watch(id, delays, failures));
    streams.push(...await Promise.all(batch));
  }
  delays.length = 0;  // from here on, every stream is open
  await new Promise((r) => setTimeout(r, Number(opts.seconds) * 1000));
  for (const s of streams) if (s) s.destroy();
  const sorted = delays.filter((d) => Number.isFinite(d)).sort((a, b) => a - b);
  return { streams: n, failed: failures.count, events: sorted.length,
    p50: pct(sorted, 0.5), p99: pct(sorted, 0.99), max: sorted[sorted.length - 1] };
}

const rows = [];
for (const n of opts.steps.split(',').map(Number)) {
  const r = await step(n);
  rows.push(r);
  console.log(`${String(r.streams).padStart(6)} streams  ${String(r.events).padStart(7)} events  p50 ${r.p50} ms  p99 ${r.p99} ms  max ${r.max} ms  failed ${r.failed}`);
  if (r.failed > 0 || !(r.p99 < Number(opts['limit-ms']))) break;
  await new Promise((res) => setTimeout(res, 2000));
}
const ok = rows.filter((r) => r.failed === 0 && r.p99 < Number(opts['limit-ms']));
console.log(`most streams with p99 under ${opts['limit-ms']} ms: ${ok.length ? ok[ok.length - 1].streams : 'none'}`);
process.exit(0);
