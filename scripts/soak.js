#!/usr/bin/env node
// The chaos soak (issue 29 item 10; docs/permits.md): `npm run soak -- --seconds N` (default 60, at
// most 3600). Not part of `npm test`; CI runs it for 60 s.
//
// On loopback only: a private redis-server without persistence (spawned here; redis-server must be on
// PATH, or REDIS_SERVER_BIN), the dev PDP (built dist/), one PEP asking for refunds, and two replicas
// of the payments service, each with its own connection to the shared Redis replay store, verifying
// every permit. Meanwhile the PDP keeps failing (setFault: 500, 503, garbage, reset, hang, slow), the
// PDP restarts (same port, same key) and Redis restarts (losing every claim). After each Redis restart
// every permit used so far is presented again.
//
// It reports decisions, faults, restarts, wrong ALLOWs (an ALLOW for a refund the policy refuses, or
// one decided entirely while the PDP was failing or down), double spends (both replicas accepted one
// permit), replays accepted (a used permit accepted again) and sockets left open after closing, and
// exits 1 on any of the four, 2 on a usage error or when it could not run.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { inLossWindow, restartLosingData } from './soak-window.js';

const { values } = parseArgs({ options: { seconds: { type: 'string' }, json: { type: 'boolean' } } });
const seconds = values.seconds === undefined ? 60 : Number(values.seconds);
if (!Number.isInteger(seconds) || seconds < 5 || seconds > 3600) {
  process.stderr.write('soak: --seconds must be an integer from 5 to 3600\n');
  process.exit(2);
}

const { createPep, createPermitVerifier } = await import('../dist/index.js');
const { startDevPdp } = await import('@agent-pep/dev-pdp');
const { createRedisReplayStore } = await import('../dist/replay/redis.js');

// A watchdog: the soak is bounded whatever happens below.
const watchdog = setTimeout(
  () => {
    process.stderr.write('soak: did not finish within its bound; stopping\n');
    process.exit(2);
  },
  (seconds + 90) * 1000,
);
watchdog.unref();

const AGENT = 'soak-agent';
const AUDIENCE = 'payments-service';
const TOOL = 'refund_payment';
const LIMIT = 100; // refunds over LIMIT are refused by the policy
const TOLERANCE_SEC = 5; // the verifiers' and the stores' clock tolerance (their default)
const POLICY = {
  agents: [AGENT],
  latches: [
    {
      id: 'refund-cap',
      stage: 'action',
      tool: TOOL,
      when: { 'args.amount': { gt: LIMIT } },
      verdict: 'BLOCK',
      reason: 'refunds over the cap are refused',
    },
  ],
};
const FAULTS = [
  { kind: 'status', status: 500 },
  { kind: 'status', status: 503 },
  { kind: 'garbage' },
  { kind: 'reset' },
  { kind: 'hang' },
  { kind: 'slow', bytesPerSecond: 64 },
];

const stats = {
  seconds,
  decisions: 0,
  allows: 0,
  blocks: 0,
  synthesized: {},
  faults: 0,
  pdpRestarts: 0,
  redisRestarts: 0,
  permitsVerified: 0,
  permitsRefused: {},
  wrongAllows: 0,
  doubleSpends: 0,
  replaysTried: 0,
  replaysAccepted: 0,
  replaysRefused: {},
  windowReplaysTried: 0,
  windowReplaysAccepted: 0,
  socketsLeft: 0,
};
const bump = (map, key) => {
  map[key] = (map[key] ?? 0) + 1;
};

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// --- Redis: a private server without persistence, restarted on the same port ---------------------
const REDIS_BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const redisPort = await freePort();
let redisChild;

async function pingRedis() {
  const { createConnection } = await import('node:net');
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port: redisPort });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(300, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
  });
}

async function startRedis() {
  const args = ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  redisChild = spawn(REDIS_BIN, [...args, '--daemonize', 'no', '--loglevel', 'warning'], { stdio: 'ignore' });
  const failed = new Promise((resolve) => redisChild.once('error', resolve));
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const err = await Promise.race([failed, sleep(50).then(() => undefined)]);
    if (err) throw new Error(`soak: cannot run ${REDIS_BIN} (${err.code ?? err.message}); install redis-server`);
    if (await pingRedis()) return;
  }
  throw new Error('soak: redis-server did not answer within 10 s');
}

async function stopRedis() {
  const child = redisChild;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL'); // a crash: nothing is saved (there is no persistence anyway)
  await exited;
}

// --- The PDP: restarted on the same port with the same key, so permits stay verifiable -------------
const { privateKey } = generateKeyPairSync('ed25519');
let pdpPort = 0;
let pdp;
/** Windows [from, to] in which the PDP could not have decided (a fault, or down). */
const badWindows = [];
let openBad; // the window now open, if any

async function startPdp() {
  pdp = await startDevPdp({
    policy: POLICY,
    port: pdpPort,
    key: privateKey,
    audience: AUDIENCE,
    log: false,
    keepAliveTimeoutMs: 1000,
  });
  pdpPort = Number(new URL(pdp.url).port);
}

function openWindow() {
  if (!openBad) openBad = { from: Date.now(), to: Number.POSITIVE_INFINITY };
}
function closeWindow() {
  if (openBad) {
    openBad.to = Date.now();
    badWindows.push(openBad);
    openBad = undefined;
  }
}
/** True when [t0, t1] lies wholly inside one window in which the PDP could not have answered ALLOW. */
function whollyBad(t0, t1) {
  if (openBad && t0 >= openBad.from) return true;
  return badWindows.some((w) => t0 >= w.from && t1 <= w.to);
}

// --- Run -------------------------------------------------------------------------------------------
let stopping = false;
let lastLossAt; // when Redis last lost its data
const used = []; // { permit, args, usedAt }

async function verifyOnBoth(replicas, permit, args) {
  const results = await Promise.allSettled(replicas.map((r) => r.verify(permit, { tool: TOOL, args })));
  const accepted = results.filter((r) => r.status === 'fulfilled').length;
  for (const r of results) if (r.status === 'rejected') bump(stats.permitsRefused, r.reason?.code ?? 'error');
  return accepted;
}

async function agent(pep, replicas) {
  while (!stopping) {
    const amount = 1 + Math.floor(Math.random() * 2 * LIMIT);
    const args = { orderId: `ord_${randomUUID().slice(0, 8)}`, amount };
    const t0 = Date.now();
    const d = await pep.authorizeAction(TOOL, args);
    const t1 = Date.now();
    stats.decisions++;
    if (d.verdict !== 'ALLOW' && d.verdict !== 'WARN') {
      stats.blocks++;
      if (d.synthesized) bump(stats.synthesized, d.synthesized.code);
      continue;
    }
    stats.allows++;
    if (amount > LIMIT || whollyBad(t0, t1)) {
      stats.wrongAllows++;
      continue;
    }
    if (typeof d.permitId !== 'string') continue;
    const verifyStartedAt = Date.now();
    const accepted = await verifyOnBoth(replicas, d.permitId, args);
    if (accepted > 1) stats.doubleSpends++;
    if (accepted === 1) {
      stats.permitsVerified++;
      // usedAt: when the claim may have been made at the earliest (a loss during the verify may follow it)
      used.push({ permit: d.permitId, args, usedAt: verifyStartedAt });
    }
  }
}

/** The permit's `iat`, in ms. */
function issuedAtMs(permit) {
  return JSON.parse(Buffer.from(permit.split('.')[1], 'base64url').toString('utf8')).iat * 1000;
}

/**
 * Presents used permits again, each to one replica chosen at random: every one must be refused, but
 * after a data loss at `lossAt` one issued within the clock tolerance before it may be accepted once
 * more (the documented window, docs/permits.md), which is counted apart.
 */
async function replay(replicas, batch, lossAt) {
  for (const u of batch) {
    if (stopping) return;
    const inWindow = inLossWindow(u.usedAt, issuedAtMs(u.permit), lossAt, TOLERANCE_SEC);
    if (inWindow) stats.windowReplaysTried++;
    else stats.replaysTried++;
    const replica = replicas[Math.floor(Math.random() * replicas.length)];
    try {
      await replica.verify(u.permit, { tool: TOOL, args: u.args });
      if (inWindow) stats.windowReplaysAccepted++;
      else stats.replaysAccepted++;
    } catch (error) {
      bump(stats.replaysRefused, error?.code ?? 'error');
    }
  }
}

/** Up to `n` used permits still within their lifetime, of every age (oldest dropped for good). */
function sampleUsed(n) {
  const cutoff = Date.now() - 58_000;
  while (used.length > 0 && used[0].usedAt < cutoff) used.shift();
  if (used.length <= n) return used.slice();
  const step = used.length / n;
  return Array.from({ length: n }, (_, i) => used[Math.floor(i * step)]);
}

/** Waits until the store answers again after a Redis restart (a refusal before that is no test). */
async function untilRedisAnswers(store) {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    try {
      await store.claim(`soak-probe-${randomUUID()}`, Date.now() + 10_000, Date.now());
      return;
    } catch {
      await sleep(100);
    }
  }
}

async function chaos(replicas, stores, until) {
  let nextPdpRestart = Date.now() + 7_000;
  let nextRedisRestart = Date.now() + 11_000;
  while (Date.now() < until) {
    // a fault for 0.3 to 1.2 s, then 0.5 to 1.5 s of a working PDP
    pdp.setFault(FAULTS[stats.faults % FAULTS.length]);
    stats.faults++;
    openWindow();
    await sleep(300 + Math.random() * 900);
    pdp.setFault(null);
    closeWindow();
    await sleep(500 + Math.random() * 1000);

    if (Date.now() >= nextPdpRestart) {
      openWindow();
      await pdp.close();
      await sleep(200 + Math.random() * 800);
      await startPdp();
      closeWindow();
      stats.pdpRestarts++;
      nextPdpRestart = Date.now() + 6_000 + Math.random() * 6_000;
    }
    if (Date.now() >= nextRedisRestart) {
      const lossAt = await restartLosingData(stopRedis, () => sleep(200 + Math.random() * 800), startRedis);
      lastLossAt = lossAt;
      stats.redisRestarts++;
      await untilRedisAnswers(stores[0]);
      // permits used before the restart, of every age within their lifetime: none may be accepted again
      await replay(replicas, sampleUsed(300), lossAt);
      nextRedisRestart = Date.now() + 8_000 + Math.random() * 8_000;
    } else if (used.length > 0) {
      await replay(replicas, [used[Math.floor(Math.random() * used.length)]], lastLossAt);
    }
  }
}

function tcpResources() {
  return process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap' || r === 'TCPServerWrap').length;
}

let exitCode = 0;
try {
  await startRedis();
  await startPdp();
  const stores = [createRedisReplayStore({ url: `redis://127.0.0.1:${redisPort}` })];
  stores.push(createRedisReplayStore({ url: `redis://127.0.0.1:${redisPort}` }));
  const replicas = stores.map((replayStore) =>
    createPermitVerifier({ keys: pdp.jwks, issuer: pdp.issuer, audience: AUDIENCE, replayStore }),
  );
  const pep = createPep({
    pdpUrl: pdp.url,
    agentId: AGENT,
    session: 'soak',
    timeoutMs: 600,
    retries: 1,
    permits: false,
  });
  const until = Date.now() + seconds * 1000;
  const agents = Array.from({ length: 4 }, () => agent(pep, replicas));
  await chaos(replicas, stores, until);
  stopping = true;
  await Promise.all(agents);
  await pep.close();
  for (const s of stores) await s.close();
  await pdp.close();
  await stopRedis();
  await sleep(200);
  stats.socketsLeft = tcpResources();
} catch (error) {
  process.stderr.write(`soak: ${error instanceof Error ? error.message : String(error)}\n`);
  await pdp?.close().catch(() => {});
  await stopRedis().catch(() => {});
  exitCode = 2;
}

const failures = [
  ['wrong ALLOWs', stats.wrongAllows],
  ['double spends', stats.doubleSpends],
  ['replays accepted', stats.replaysAccepted],
  ['sockets left', stats.socketsLeft],
].filter(([, n]) => n > 0);
if (values.json) {
  process.stdout.write(`${JSON.stringify(stats)}\n`);
} else {
  const kv = (m) =>
    Object.entries(m)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ') || 'none';
  process.stdout.write(
    [
      `soak: ${seconds} s on loopback`,
      `decisions ${stats.decisions} (ALLOW ${stats.allows}, BLOCK ${stats.blocks}; synthesized: ${kv(stats.synthesized)})`,
      `faults ${stats.faults}, PDP restarts ${stats.pdpRestarts}, Redis restarts ${stats.redisRestarts}`,
      `permits verified ${stats.permitsVerified} (refusals by a replica: ${kv(stats.permitsRefused)})`,
      `replays tried ${stats.replaysTried}, accepted ${stats.replaysAccepted} (refusals, both kinds: ${kv(stats.replaysRefused)})`,
      `replays of permits issued within ${TOLERANCE_SEC} s before a Redis data loss (the documented window): ${stats.windowReplaysAccepted} of ${stats.windowReplaysTried} accepted`,
      `wrong ALLOWs ${stats.wrongAllows}, double spends ${stats.doubleSpends}, sockets left ${stats.socketsLeft}`,
      '',
    ].join('\n'),
  );
}
if (exitCode === 0 && failures.length > 0) {
  process.stderr.write(`soak: FAILED: ${failures.map(([k, n]) => `${k} ${n}`).join(', ')}\n`);
  exitCode = 1;
}
process.exit(exitCode);
