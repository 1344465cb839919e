// Drives the dev PDP (in this process) with one kind of decision for a few seconds, so it can be profiled
// (issue 41):
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/devpdp-profile.js demo memory 200 5
//   node bench/cpuprofile-summary.js /tmp/prof/*.cpuprofile
//
// policy: demo (demo/policy.json) or contract (test/fixtures/dev-pdp/contract-policy.json, the Cerbos
// row's policy); store: memory or redis (a redis-server of its own); history: the steps each of the 16
// sessions holds first (0: every decision a new session). Prints the decisions a second and the µs of
// this process's CPU a decision.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Pool, request } from 'undici';
import { spawnRedis } from './lib.js';

const [which = 'demo', store = 'memory', hist = '200', secs = '5'] = process.argv.slice(2);
const history = Number(hist);
const root = new URL('../', import.meta.url);
const policyFile = which === 'demo' ? 'demo/policy.json' : 'test/fixtures/dev-pdp/contract-policy.json';
const policy = JSON.parse(readFileSync(new URL(policyFile, root), 'utf8'));
const devPdp = await import('agent-pep/dev-pdp');
const redis = store === 'redis' ? await spawnRedis() : undefined;
if (redis?.missing) throw new Error(redis.message);
const pdp = await devPdp.startDevPdp({
  policy,
  log: false,
  maxHistory: Math.max(history, 1),
  ...(redis ? { sessionStore: { redis: redis.url } } : {}),
});
const pool = new Pool(pdp.url, { connections: 16 });
const ARGS = { recipient: 'GB00000000000000000001', amount: 10, subject: 'bench' };
async function decide(session) {
  const requestId = randomUUID();
  const body = JSON.stringify({
    agentId: 'support-ai',
    session,
    stage: 'action',
    requestId,
    tool: 'send_money',
    args: ARGS,
  });
  const res = await request(`${pdp.url}/api/policy/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', 'x-request-id': requestId },
    body,
    dispatcher: pool,
  });
  const d = await res.body.json();
  if (res.statusCode !== 200 || d.verdict !== 'ALLOW') throw new Error(`not an ALLOW: ${JSON.stringify(d)}`);
}
const sessions = Array.from({ length: 16 }, (_, i) => `prof-${i}`);
await Promise.all(
  sessions.map(async (s) => {
    for (let i = 0; i < history; i++) await decide(s);
  }),
);
const end = performance.now() + Number(secs) * 1000;
let ops = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await Promise.all(
  sessions.map(async (s) => {
    while (performance.now() < end) {
      await decide(history === 0 ? `prof-empty-${randomUUID()}` : s);
      ops++;
    }
  }),
);
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
console.log(
  `${which} ${store} history ${history}: ${Math.round((ops / ms) * 1000)} decisions/s, ${Math.round((cpu.user + cpu.system) / ops)} µs CPU a decision (client and PDP)`,
);
await pool.close();
await pdp.close();
await redis?.stop();
