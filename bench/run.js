// agent-pep benchmark (issue 6): the cost of enforcement against the bare floor and against peer SDKs.
//
//   npm run bench               full run (a few minutes)
//   npm run bench -- --quick    the same scenarios, shorter (under 60 s)
//
// Starts its own loopback PDP stub (bench/stub.js, a child process) and redis-server, stops both on the
// way out, prints a table and writes bench/results.json. See BENCHMARKS.md.
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { jwtVerify, SignJWT } from 'jose';
import { Pool, request } from 'undici';
import { benchDevPdp, DEVPDP_CONCURRENCY, DEVPDP_ROWS } from './devpdp.js';
import { batchFloor, permitFloor, textFloor } from './floors.js';
import {
  closedPort,
  createCell,
  FLOOR_POOL_OPTIONS,
  floorDispatch,
  HOST,
  pinClient,
  pinServer,
  rowOf,
  runBatch,
  runCount,
  runRounds,
  skippedRow,
  spawnCerbos,
  spawnRedis,
  unpinClient,
} from './lib.js';
import { benchSessions, SESSION_CONCURRENCY, SESSION_ROWS } from './sessions.js';
import { benchStartup, STARTUP_ROWS } from './startup.js';
import { loadActionHash, spawnStub } from './stub.js';

const THIS_FILE = fileURLToPath(import.meta.url);
const ROOT = new URL('../', import.meta.url);

export const PROFILES = {
  quick: {
    name: 'quick',
    rounds: 3,
    batchMs: 200,
    warmupMs: 300,
    concurrency: [1, 16, 64],
    verifyPool: 2000,
    verifyBatch: 250,
    verifyRounds: 4,
    refusedSamples: 300,
    refusedDefaultSamples: 48,
    hungSamples: 12,
    memory: [10_000, 200_000],
  },
  full: {
    name: 'full',
    rounds: 8,
    batchMs: 800,
    warmupMs: 1500,
    concurrency: [1, 16, 64],
    verifyPool: 6000,
    verifyBatch: 500,
    verifyRounds: 12,
    refusedSamples: 1500,
    refusedDefaultSamples: 192,
    hungSamples: 48,
    memory: [10_000, 200_000],
  },
  smoke: {
    name: 'smoke',
    rounds: 1,
    batchMs: 40,
    warmupMs: 40,
    concurrency: [1, 16, 64],
    verifyPool: 60,
    verifyBatch: 30,
    verifyRounds: 1,
    refusedSamples: 5,
    refusedDefaultSamples: 4,
    hungSamples: 2,
    memory: [500, 2000],
  },
};

const AGENT_ID = 'support-ai';
const SESSION = 'sess_bench_0001';
const TOOL = 'refund_payment';
const ARGS = Object.freeze({ orderId: 'ord_1842', amount: 129.5, currency: 'EUR', reason: 'damaged on arrival' });
const CONTENT =
  'Hi, my order ord_1842 arrived damaged. The box was crushed and the ceramic mug inside is broken. ' +
  'Could you please refund it to my card, or send a replacement? I attached photos to my earlier email. Thanks, Ana';
const AUTHORIZE_PATH = '/api/policy/authorize';
/** The floor rows (issue 30): an undici `Pool` with agent-pep's options, `dispatch`, a minimal handler. */
const FLOOR = 'floor (undici Pool dispatch)';
const FLOOR_ACTION = 'floor (undici Pool dispatch, action)';
const FLOOR_OTEL = 'floor + @opentelemetry/instrumentation-undici';
/** The floor of `authorizeAction` that does the contract's work too (issue 43, bench/floors.js). */
const FLOOR_PERMIT = 'floor (dispatch, action, answer checks, rule 5)';
const FLOOR_TEXT = 'floor (dispatch, text, fresh request, answer checks)';
const HUNG_TIMEOUT_MS = 200;

/* ------------------------------------------------------------------------------------------------ */
/* agent-pep, loaded through the package self-reference (dist/, built by `npm run bench`)            */
/* ------------------------------------------------------------------------------------------------ */

async function loadAgentPep() {
  const out = { pep: null, redis: null, version: 'unknown', why: '' };
  try {
    out.version = JSON.parse(readFileSync(new URL('package.json', ROOT), 'utf8')).version;
  } catch {}
  try {
    out.pep = await import('agent-pep');
  } catch (err) {
    out.why = `agent-pep not importable (run \`npm run build\`): ${err.message}`;
  }
  try {
    out.redis = await import('agent-pep/redis');
  } catch {}
  return out;
}

function versionOf(pkg) {
  try {
    return JSON.parse(readFileSync(new URL(`node_modules/${pkg}/package.json`, ROOT), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

/* ------------------------------------------------------------------------------------------------ */
/* Section 1: the decision clients                                                                  */
/* ------------------------------------------------------------------------------------------------ */

/** Headers and body exactly as agent-pep sends them (CONTRACT.md section 3), built once: the floor. */
function floorRequest(stage, version) {
  const requestId = randomUUID();
  const body =
    stage === 'action'
      ? JSON.stringify({ agentId: AGENT_ID, session: SESSION, stage, requestId, tool: TOOL, args: ARGS })
      : JSON.stringify({ agentId: AGENT_ID, session: SESSION, stage, requestId, content: CONTENT });
  const headers = {
    'content-type': 'application/json',
    accept: 'application/json',
    'x-request-id': requestId,
    'user-agent': `agent-pep/${version}`,
  };
  return { body, headers };
}

/** The headers of every request that do not change between decisions (CONTRACT.md section 3). */
function staticHeaders(version) {
  return { 'content-type': 'application/json', accept: 'application/json', 'user-agent': `agent-pep/${version}` };
}

function pepOptions(stub, extra = {}) {
  return {
    pdpUrl: stub.url,
    agentId: AGENT_ID,
    session: SESSION,
    permits: { keys: stub.jwks, issuer: stub.issuer },
    ...extra,
  };
}

async function probePep(ap, stub) {
  if (!ap.pep) return ap.why;
  try {
    const pep = ap.pep.createPep(pepOptions(stub));
    const a = await pep.checkInput(CONTENT);
    const b = await pep.authorizeAction(TOOL, { ...ARGS });
    await pep.close();
    if (a.verdict !== 'ALLOW' || a.synthesized) return `checkInput answered ${a.verdict} ${a.synthesized?.code ?? ''}`;
    if (b.verdict !== 'ALLOW' || !b.permitId)
      return `authorizeAction answered ${b.verdict} ${b.synthesized?.code ?? ''}`;
    return '';
  } catch (err) {
    return `agent-pep createPep failed: ${err.message}`;
  }
}

async function decisionClients(stub, ap, pepWhy) {
  const { OPAClient } = await import('@open-policy-agent/opa');
  const { HTTP } = await import('@cerbos/http');
  const url = `${stub.url}${AUTHORIZE_PATH}`;
  const text = floorRequest('input', ap.version);
  const action = floorRequest('action', ap.version);

  const pool = new Pool(stub.url);
  const poolAction = new Pool(stub.url);
  // The true floor (issue 30): what checkInput and authorizeAction do on the wire, with nothing else.
  const floorPool = new Pool(stub.url, FLOOR_POOL_OPTIONS);
  const floorPoolAction = new Pool(stub.url, FLOOR_POOL_OPTIONS);
  const floorPoolOtel = new Pool(stub.url, FLOOR_POOL_OPTIONS);
  const floorPoolPermit = new Pool(stub.url, FLOOR_POOL_OPTIONS);
  const floorPoolText = new Pool(stub.url, FLOOR_POOL_OPTIONS);
  // The telemetry SDK the telemetry rows use, and OpenTelemetry's undici instrumentation on its tracer
  // and meter providers. The instrumentation hooks undici's diagnostics channels (every undici in the
  // process, agent-pep's too), so it is enabled only while its own row runs (`enter`/`leave`).
  const otel = await telemetrySdk();
  const otelUndici = await undiciInstrumentation(otel);
  const floorCall = (p, req, ok) => async () => {
    const r = await floorDispatch(p, stub.url, AUTHORIZE_PATH, req.headers, req.body);
    return r.status === 200 && ok(r.body);
  };
  const allowed = (d) => d.verdict === 'ALLOW';
  const permitted = (d) => d.verdict === 'ALLOW' && typeof d.permitId === 'string';
  const clients = [
    { name: FLOOR, call: floorCall(floorPool, text, allowed), close: () => floorPool.close() },
    {
      name: FLOOR_TEXT,
      call: textFloor({
        pool: floorPoolText,
        origin: stub.url,
        path: AUTHORIZE_PATH,
        headers: staticHeaders(ap.version),
        agentId: AGENT_ID,
        session: SESSION,
        content: CONTENT,
      }),
      close: () => floorPoolText.close(),
    },
    {
      name: FLOOR_ACTION,
      call: floorCall(floorPoolAction, action, permitted),
      close: () => floorPoolAction.close(),
    },
    {
      name: FLOOR_PERMIT,
      call: permitFloor({
        pool: floorPoolPermit,
        origin: stub.url,
        path: AUTHORIZE_PATH,
        headers: staticHeaders(ap.version),
        agentId: AGENT_ID,
        session: SESSION,
        tool: TOOL,
        args: ARGS,
      }),
      close: () => floorPoolPermit.close(),
    },
    {
      name: FLOOR_OTEL,
      call: trimmed(otel, floorCall(floorPoolOtel, text, allowed)),
      enter: () => otelUndici.enable(),
      leave: () => {
        otelUndici.disable();
        otel.trim(true);
      },
      close: () => floorPoolOtel.close(),
    },
    {
      name: 'undici.request',
      call: async () => {
        const res = await request(url, { method: 'POST', headers: text.headers, body: text.body, dispatcher: pool });
        const d = await res.body.json();
        return res.statusCode === 200 && d.verdict === 'ALLOW';
      },
      close: () => pool.close(),
    },
    {
      name: 'undici.request (action)',
      call: async () => {
        const res = await request(url, {
          method: 'POST',
          headers: action.headers,
          body: action.body,
          dispatcher: poolAction,
        });
        const d = await res.body.json();
        return res.statusCode === 200 && d.verdict === 'ALLOW' && typeof d.permitId === 'string';
      },
      close: () => poolAction.close(),
    },
    {
      name: 'fetch',
      call: async () => {
        const res = await fetch(url, { method: 'POST', headers: text.headers, body: text.body });
        const d = await res.json();
        return res.status === 200 && d.verdict === 'ALLOW';
      },
      close: async () => {},
    },
  ];

  if (pepWhy) {
    clients.push(
      { name: 'agent-pep checkInput', skip: pepWhy },
      { name: 'agent-pep authorizeAction', skip: pepWhy },
      { name: 'agent-pep checkInput (authzen)', skip: pepWhy },
      { name: 'agent-pep authorizeAction (authzen)', skip: pepWhy },
    );
  } else {
    const pepText = ap.pep.createPep(pepOptions(stub));
    const pepAction = ap.pep.createPep(pepOptions(stub));
    // Without `permits`: rule 5 (decode the permit's payload, hash the args, compare) does not run.
    // Information beside the action target: what rule 5 costs a decision on the wire.
    const { permits: _permits, ...noPermits } = pepOptions(stub);
    const pepActionNoRule5 = ap.pep.createPep(noPermits);
    // Three pass-through interceptors: the cost of a chain that changes nothing (issue 10).
    const passThrough = ['a', 'b', 'c'].map((name) => ({ name, before: () => ({ action: 'proceed' }) }));
    const pepText3 = ap.pep.createPep(pepOptions(stub, { interceptors: passThrough }));
    // The same two decisions over AuthZEN 1.0 (issue 13).
    const pepTextZ = ap.pep.createPep(pepOptions(stub, { protocol: 'authzen' }));
    const pepActionZ = ap.pep.createPep(pepOptions(stub, { protocol: 'authzen' }));
    const pepAction3 = ap.pep.createPep(pepOptions(stub, { interceptors: passThrough }));
    // Telemetry on (issue 14): the OpenTelemetry SDK with an in-memory span exporter and a metric reader.
    const pepTextOtel = ap.pep.createPep(pepOptions(stub, { telemetry: { tracer: otel.tracer, meter: otel.meter } }));
    // Two rows for information beside the target, splitting its cost (no target of their own):
    // agent-pep's own telemetry code, with the API's no-op tracer and meter (no SDK registered), and
    // the SDK with a root sampler keeping 1% of the traces (spans of the rest are not recorded).
    const pepTextOtelNoop = ap.pep.createPep(
      pepOptions(stub, {
        telemetry: { tracer: otel.api.trace.getTracer('bench'), meter: otel.api.metrics.getMeter('bench') },
      }),
    );
    const pepTextOtelSampled = ap.pep.createPep(
      pepOptions(stub, { telemetry: { tracer: otel.sampledTracer, meter: otel.meter } }),
    );
    clients.push(
      {
        name: 'agent-pep checkInput',
        call: async () => {
          const d = await pepText.checkInput(CONTENT);
          return d.verdict === 'ALLOW' && d.synthesized === undefined;
        },
        close: () => pepText.close(),
      },
      {
        name: 'agent-pep authorizeAction',
        call: async () => {
          const d = await pepAction.authorizeAction(TOOL, ARGS);
          return d.verdict === 'ALLOW' && d.synthesized === undefined && typeof d.permitId === 'string';
        },
        close: () => pepAction.close(),
      },
      {
        name: 'agent-pep authorizeAction (no permits option)',
        call: async () => {
          const d = await pepActionNoRule5.authorizeAction(TOOL, ARGS);
          return d.verdict === 'ALLOW' && d.synthesized === undefined && typeof d.permitId === 'string';
        },
        close: () => pepActionNoRule5.close(),
      },
      {
        name: 'agent-pep checkInput (authzen)',
        call: async () => {
          const d = await pepTextZ.checkInput(CONTENT);
          return d.verdict === 'ALLOW' && d.synthesized === undefined;
        },
        close: () => pepTextZ.close(),
      },
      {
        name: 'agent-pep authorizeAction (authzen)',
        call: async () => {
          const d = await pepActionZ.authorizeAction(TOOL, ARGS);
          return d.verdict === 'ALLOW' && d.synthesized === undefined && typeof d.permitId === 'string';
        },
        close: () => pepActionZ.close(),
      },
      {
        name: 'agent-pep checkInput (3 interceptors)',
        call: async () => {
          const d = await pepText3.checkInput(CONTENT);
          return d.verdict === 'ALLOW' && d.synthesized === undefined;
        },
        close: () => pepText3.close(),
      },
      {
        name: 'agent-pep checkInput (telemetry)',
        call: async () => {
          const d = await pepTextOtel.checkInput(CONTENT);
          otel.trim();
          return d.verdict === 'ALLOW' && d.synthesized === undefined;
        },
        close: () => pepTextOtel.close(),
      },
      {
        name: 'agent-pep checkInput (telemetry, API no-op)',
        call: async () => {
          const d = await pepTextOtelNoop.checkInput(CONTENT);
          return d.verdict === 'ALLOW' && d.synthesized === undefined;
        },
        close: () => pepTextOtelNoop.close(),
      },
      {
        name: 'agent-pep checkInput (telemetry, 1% sampled)',
        call: async () => {
          const d = await pepTextOtelSampled.checkInput(CONTENT);
          otel.trim();
          return d.verdict === 'ALLOW' && d.synthesized === undefined;
        },
        close: () => pepTextOtelSampled.close(),
      },
      {
        name: 'agent-pep authorizeAction (3 interceptors)',
        call: async () => {
          const d = await pepAction3.authorizeAction(TOOL, ARGS);
          return d.verdict === 'ALLOW' && d.synthesized === undefined && typeof d.permitId === 'string';
        },
        close: () => pepAction3.close(),
      },
    );
  }

  const opa = new OPAClient(stub.url);
  const opaInput = { agentId: AGENT_ID, session: SESSION, stage: 'input', content: CONTENT };
  const cerbos = new HTTP(stub.url);
  const cerbosRequest = {
    principal: { id: AGENT_ID, roles: ['agent'], attr: { session: SESSION } },
    resource: { kind: 'input', id: 'msg', attr: { content: CONTENT } },
    actions: ['check'],
  };
  clients.push(
    {
      name: 'opa evaluate',
      call: async () => {
        const r = await opa.evaluate('agentpep/decision', opaInput);
        return r.allow === true;
      },
      close: async () => {},
    },
    {
      name: 'cerbos checkResource',
      call: async () => {
        const r = await cerbos.checkResource(cerbosRequest);
        return r.isAllowed('check') === true;
      },
      // the last client closed: the SDK the telemetry rows share goes with it
      close: async () => {
        otelUndici.disable();
        await otel.shutdown();
      },
    },
  );
  return inRatioOrder(clients);
}

/**
 * The rows of each gated ratio next to each other. The rounds rotate the clients but keep their
 * cyclic order, so each agent-pep row runs just after its floor in every round: on a shared machine
 * the load changes over seconds, and two slots far apart in a round compare two different machines.
 */
const RATIO_ORDER = [
  FLOOR_TEXT,
  FLOOR,
  'agent-pep checkInput',
  'agent-pep checkInput (3 interceptors)',
  'agent-pep checkInput (telemetry)',
  FLOOR_OTEL,
  FLOOR_ACTION,
  FLOOR_PERMIT,
  'agent-pep authorizeAction',
  'agent-pep authorizeAction (no permits option)',
  'agent-pep authorizeAction (3 interceptors)',
];

/** The clients with those of {@link RATIO_ORDER} first, in its order; the rest after, in theirs. */
function inRatioOrder(clients) {
  const rank = (c) => {
    const i = RATIO_ORDER.indexOf(c.name);
    return i === -1 ? RATIO_ORDER.length : i;
  };
  return clients
    .map((c, i) => ({ c, i }))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
    .map((x) => x.c);
}

/** `call`, then the exporters trimmed as the telemetry rows trim them (the same work per call). */
function trimmed(otel, call) {
  return async () => {
    const ok = await call();
    otel.trim();
    return ok;
  };
}

/**
 * OpenTelemetry's own HTTP client instrumentation of undici (`@opentelemetry/instrumentation-undici`,
 * its defaults: one CLIENT span and one `http.client.request.duration` histogram point per request, and
 * the trace context injected), registered on the SDK's tracer provider and meter provider (the ones the
 * telemetry rows use), and disabled until the row that measures it enables it.
 */
async function undiciInstrumentation(otel) {
  const { UndiciInstrumentation } = await import('@opentelemetry/instrumentation-undici');
  // Made enabled (its config decides whether it records: `enabled: false` would record nothing even
  // once enabled), then unsubscribed until its row runs.
  const instrumentation = new UndiciInstrumentation();
  instrumentation.setTracerProvider(otel.tracerProvider);
  instrumentation.setMeterProvider(otel.meterProvider);
  instrumentation.disable();
  return instrumentation;
}

/**
 * The OpenTelemetry SDK as an application runs it in production (a BatchSpanProcessor; the
 * SimpleSpanProcessor is for debugging), exporting spans to memory (trimmed as it goes). `tracer`
 * records every span (the SDK's default sampler); `sampledTracer` keeps 1% of the root traces
 * (ParentBased(TraceIdRatioBased(0.01)), a usual setting at volume); `api` is `@opentelemetry/api`,
 * whose tracer and meter are no-ops here (the bench registers no global provider).
 */
export async function telemetrySdk() {
  const api = await import('@opentelemetry/api');
  const {
    BasicTracerProvider,
    BatchSpanProcessor,
    InMemorySpanExporter,
    ParentBasedSampler,
    TraceIdRatioBasedSampler,
  } = await import('@opentelemetry/sdk-trace-base');
  const { InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader, AggregationTemporality } = await import(
    '@opentelemetry/sdk-metrics'
  );
  // One exporter per provider: a provider's shutdown stops its exporter.
  const exporters = [new InMemorySpanExporter(), new InMemorySpanExporter()];
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporters[0])] });
  const sampledProvider = new BasicTracerProvider({
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.01) }),
    spanProcessors: [new BatchSpanProcessor(exporters[1])],
  });
  const meterProvider = new MeterProvider({
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
        exportIntervalMillis: 1000,
      }),
    ],
  });
  let n = 0;
  return {
    api,
    tracerProvider,
    meterProvider,
    tracer: tracerProvider.getTracer('bench'),
    sampledTracer: sampledProvider.getTracer('bench'),
    meter: meterProvider.getMeter('bench'),
    trim(now = false) {
      if (++n % 4096 === 0 || now) for (const e of exporters) e.reset();
    },
    async shutdown() {
      await tracerProvider.shutdown();
      await sampledProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** Runs one batch of client `c` between its `enter` and `leave` (a row that switches something on for itself). */
async function phase(c, run) {
  c.enter?.();
  try {
    await run();
  } finally {
    c.leave?.();
  }
}

async function benchDecisions(stub, ap, pepWhy, profile, rows, log) {
  const clients = await decisionClients(stub, ap, pepWhy);
  const live = clients.filter((c) => !c.skip);
  const cells = new Map();
  try {
    log(`decisions: warm-up ${live.length} clients`);
    for (const c of live) {
      await phase(c, () => runBatch(c.call, 16, profile.warmupMs, null));
      for (const n of profile.concurrency) cells.set(`${c.name}|${n}`, createCell());
    }
    for (let r = 0; r < profile.rounds; r++) {
      log(`decisions: round ${r + 1}/${profile.rounds}`);
      for (const n of profile.concurrency) {
        for (let i = 0; i < live.length; i++) {
          const c = live[(i + r) % live.length];
          await phase(c, () => runBatch(c.call, n, profile.batchMs, cells.get(`${c.name}|${n}`)));
        }
      }
    }
  } finally {
    for (const c of live) await c.close().catch(() => {});
  }
  for (const c of clients) {
    for (const n of profile.concurrency) {
      if (c.skip) rows.push(skippedRow('decision', c.name, n, c.skip));
      else {
        const cell = cells.get(`${c.name}|${n}`);
        const extra = cell.errors > 0 ? { note: `invalid answers: ${String(cell.lastError ?? 'wrong verdict')}` } : {};
        rows.push(rowOf('decision', c.name, n, cell, extra));
      }
    }
  }
}

/* ------------------------------------------------------------------------------------------------ */
/* Section 1b: batches and a real Cerbos (issue 13)                                                  */
/* ------------------------------------------------------------------------------------------------ */

const BATCH_SIZE = 8;
const BATCH_CONCURRENCY = 16;
/** Eight calls to eight tools (calls to one tool never share an `evaluations` request). */
const BATCH_CALLS = Object.freeze(
  Array.from({ length: BATCH_SIZE }, (_, i) => Object.freeze({ tool: `${TOOL}_${i}`, args: ARGS })),
);

const BATCH_PEP = `agent-pep authorizeActions (${BATCH_SIZE} calls, authzen)`;
const BATCH_SINGLES = `agent-pep ${BATCH_SIZE} x authorizeAction (authzen)`;
/** The floor of the batch that does the contract's per-item work too (issue 43, bench/floors.js). */
const FLOOR_BATCH = `floor batch (${BATCH_SIZE} evaluations, answer checks, rule 5)`;

/**
 * `authorizeActions` of 8 calls against the floor that sends the same `evaluations` request and does
 * the same per-item work by hand (gated, issue 43), and against 8 single `authorizeAction` calls
 * (information): calls decided per second.
 */
async function benchBatch(stub, ap, pepWhy, profile, rows, log) {
  const names = [FLOOR_BATCH, BATCH_PEP, BATCH_SINGLES];
  const floorPool = new Pool(stub.url, FLOOR_POOL_OPTIONS);
  const floor = {
    name: FLOOR_BATCH,
    call: batchFloor({
      pool: floorPool,
      origin: stub.url,
      path: '/access/v1/evaluations',
      headers: staticHeaders(ap.version),
      agentId: AGENT_ID,
      session: SESSION,
      calls: BATCH_CALLS,
    }),
  };
  if (pepWhy) {
    for (const name of names.slice(1)) rows.push(skippedRow('batch', name, BATCH_CONCURRENCY, pepWhy));
  }
  const batchPep = pepWhy ? undefined : ap.pep.createPep(pepOptions(stub, { protocol: 'authzen' }));
  const singlePep = pepWhy ? undefined : ap.pep.createPep(pepOptions(stub, { protocol: 'authzen' }));
  const allowed = (ds) =>
    ds.length === BATCH_SIZE && ds.every((d) => d.verdict === 'ALLOW' && !d.synthesized && d.permitId);
  // The floor just before the batch in every round (runRounds keeps the cyclic order).
  const clients = pepWhy
    ? [floor]
    : [
        floor,
        { name: BATCH_PEP, call: async () => allowed(await batchPep.authorizeActions(BATCH_CALLS)) },
        {
          name: BATCH_SINGLES,
          call: async () =>
            allowed(await Promise.all(BATCH_CALLS.map((c) => singlePep.authorizeAction(c.tool, c.args)))),
        },
      ];
  let cells;
  try {
    cells = await runRounds('batch', clients, BATCH_CONCURRENCY, profile, log);
  } finally {
    await floorPool.close();
    await batchPep?.close();
    await singlePep?.close();
  }
  for (const c of clients) {
    const cell = cells.get(c.name);
    const row = rowOf('batch', c.name, BATCH_CONCURRENCY, cell);
    row.calls_per_s = row.ops_per_s === null ? null : row.ops_per_s * BATCH_SIZE;
    if (cell.errors > 0) row.note = `invalid answers: ${String(cell.lastError ?? 'wrong verdict')}`;
    rows.push(row);
  }
}

const VISIBLE_SIZE = 50;
/** Fifty tool names, as an agent's tool list. */
const VISIBLE_NAMES = Object.freeze(Array.from({ length: VISIBLE_SIZE }, (_, i) => `${TOOL}_${i}`));

/**
 * `visibleTools` of 50 tools against 50 single simulated `authorizeAction` calls (what an adapter would
 * do without it), over AuthZEN at c16: tools decided per second (issue 27).
 */
async function benchVisibility(stub, ap, pepWhy, profile, rows, log) {
  const names = [
    `agent-pep visibleTools (${VISIBLE_SIZE} tools, authzen)`,
    `agent-pep ${VISIBLE_SIZE} x authorizeAction simulated (authzen)`,
  ];
  if (pepWhy) {
    for (const name of names) rows.push(skippedRow('batch', name, BATCH_CONCURRENCY, pepWhy));
    return;
  }
  const visPep = ap.pep.createPep(pepOptions(stub, { protocol: 'authzen' }));
  const singlePep = ap.pep.createPep(pepOptions(stub, { protocol: 'authzen' }));
  const clients = [
    { name: names[0], call: async () => (await visPep.visibleTools(VISIBLE_NAMES)).length === VISIBLE_SIZE },
    {
      name: names[1],
      call: async () =>
        (await Promise.all(VISIBLE_NAMES.map((t) => singlePep.authorizeAction(t, {}, { simulated: true })))).every(
          (d) => d.verdict !== 'BLOCK',
        ),
    },
  ];
  const cells = new Map(clients.map((c) => [c.name, createCell()]));
  try {
    log('visibility: warm-up');
    for (const c of clients) await runBatch(c.call, BATCH_CONCURRENCY, profile.warmupMs, null);
    for (let r = 0; r < profile.rounds; r++) {
      log(`visibility: round ${r + 1}/${profile.rounds}`);
      for (let i = 0; i < clients.length; i++) {
        const c = clients[(i + r) % clients.length];
        await runBatch(c.call, BATCH_CONCURRENCY, profile.batchMs, cells.get(c.name));
      }
    }
  } finally {
    await visPep.close();
    await singlePep.close();
  }
  for (const c of clients) {
    const cell = cells.get(c.name);
    const row = rowOf('batch', c.name, BATCH_CONCURRENCY, cell);
    row.calls_per_s = row.ops_per_s === null ? null : row.ops_per_s * VISIBLE_SIZE;
    if (cell.errors > 0) row.note = `invalid answers: ${String(cell.lastError ?? 'wrong verdict')}`;
    rows.push(row);
  }
}

/** The same `input` check against a real Cerbos PDP: agent-pep over AuthZEN beside `@cerbos/http`. */
async function benchCerbos(ap, pepWhy, profile, rows, log, cleanups) {
  const names = ['agent-pep checkInput (authzen, real Cerbos)', '@cerbos/http checkResource (real Cerbos)'];
  const skip = (why) => {
    for (const name of names) rows.push(skippedRow('cerbos', name, BATCH_CONCURRENCY, why));
  };
  if (pepWhy) return skip(pepWhy);
  const cerbos = await spawnCerbos(fileURLToPath(new URL('test/fixtures/cerbos/contract/', ROOT)));
  if (cerbos.missing) return skip(cerbos.message);
  cleanups.push(cerbos.stop);
  ap.cerbosVersion = cerbos.version;
  const { HTTP } = await import('@cerbos/http');
  const pep = ap.pep.createPep({
    pdpUrl: cerbos.url,
    agentId: AGENT_ID,
    session: SESSION,
    protocol: 'authzen',
    permits: false,
  });
  const sdk = new HTTP(cerbos.url);
  const request = {
    principal: { id: AGENT_ID, roles: ['agent'], attr: { session: SESSION } },
    resource: { kind: 'content', id: 'msg', attr: { content: CONTENT } },
    actions: ['input'],
  };
  const clients = [
    {
      name: names[0],
      call: async () => {
        const d = await pep.checkInput(CONTENT);
        return d.verdict === 'ALLOW' && d.synthesized === undefined;
      },
    },
    { name: names[1], call: async () => (await sdk.checkResource(request)).isAllowed('input') === true },
  ];
  const cells = new Map(clients.map((c) => [c.name, createCell()]));
  try {
    log(`cerbos: ${cerbos.version} at ${cerbos.url}, warm-up`);
    for (const c of clients) await runBatch(c.call, BATCH_CONCURRENCY, profile.warmupMs, null);
    for (let r = 0; r < profile.rounds; r++) {
      log(`cerbos: round ${r + 1}/${profile.rounds}`);
      for (let i = 0; i < clients.length; i++) {
        const c = clients[(i + r) % clients.length];
        await runBatch(c.call, BATCH_CONCURRENCY, profile.batchMs, cells.get(c.name));
      }
    }
  } finally {
    await pep.close();
    await cerbos.stop();
  }
  for (const c of clients) {
    const cell = cells.get(c.name);
    const extra = cell.errors > 0 ? { note: `invalid answers: ${String(cell.lastError ?? 'wrong verdict')}` } : {};
    rows.push(rowOf('cerbos', c.name, BATCH_CONCURRENCY, cell, extra));
  }
}

/* ------------------------------------------------------------------------------------------------ */
/* Section 2: permit verification                                                                   */
/* ------------------------------------------------------------------------------------------------ */

async function mintPermits(privateKey, count, issuer, audience) {
  const actionHash = await loadActionHash();
  const actHash = actionHash(TOOL, ARGS);
  const iat = Math.floor(Date.now() / 1000);
  const out = [];
  for (let i = 0; i < count; i++) {
    out.push(
      await new SignJWT({ sid: SESSION, tool: TOOL, act_hash: actHash, decision_id: `d${i}` })
        .setProtectedHeader({ alg: 'EdDSA', kid: 'bench-verify-1', typ: 'permit+jwt' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setSubject(AGENT_ID)
        .setJti(randomUUID())
        .setIssuedAt(iat)
        .setExpirationTime(iat + 300)
        .sign(privateKey),
    );
  }
  return out;
}

async function benchVerify(ap, profile, rows, log, cleanups) {
  const levels = [1, 16];
  const clientNames = [
    'jose jwtVerify',
    'verify (memory store)',
    'verify (redis store)',
    'jose jwtVerify + redis SET NX by hand',
  ];
  const why = !ap.pep
    ? ap.why
    : typeof ap.pep.createPermitVerifier !== 'function' || typeof ap.pep.createMemoryReplayStore !== 'function'
      ? 'agent-pep has no createPermitVerifier/createMemoryReplayStore yet'
      : '';
  const issuer = 'https://pdp.bench.invalid';
  const audience = 'payments-service';
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  let pool;
  let warm;
  // Before the first permit's `iat` (whole seconds): the epoch each Redis store starts with.
  const mintedSince = (Math.floor(Date.now() / 1000) - 1) * 1000;
  try {
    log(`verify: minting ${profile.verifyPool} permits (outside the timed region)`);
    pool = await mintPermits(privateKey, profile.verifyPool, issuer, audience);
    warm = await mintPermits(privateKey, 1, issuer, audience);
  } catch (err) {
    for (const c of clientNames) for (const n of levels) rows.push(skippedRow('verify', c, n, err.message));
    return;
  }
  const joseOptions = { issuer, audience, algorithms: ['EdDSA'], typ: 'permit+jwt' };
  const action = { tool: TOOL, args: ARGS };

  // Redis: a real redis-server on a free port, and one ioredis connection shared by the stores.
  let redisWhy = why || (ap.redis ? '' : 'agent-pep/redis not importable');
  let redisClient;
  if (!redisWhy) {
    const redis = await spawnRedis();
    if (redis.missing) {
      redisWhy = redis.message;
      log(`verify: ${redis.message}`);
    } else {
      cleanups.push(redis.stop);
      const { Redis } = await import('ioredis');
      redisClient = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      cleanups.push(async () => redisClient.disconnect());
      await redisClient.connect();
      ap.redisVersion = redis.version;
    }
  }

  let batch = 0;
  const makeVerifier = async (kind) => {
    batch++;
    const prefix = `bench:${process.pid}:${batch}:`;
    // A fresh prefix (every jti new to it) is, to the store, a Redis that lost its data now: its epoch
    // would be later than the pool's `iat` and every permit `permit_replay_unknown` (docs/permits.md).
    // The epoch key says what is true of this server: up, with its data, since before the pool was minted.
    if (kind === 'redis') await redisClient.set(`${prefix}epoch`, String(mintedSince));
    const replayStore =
      kind === 'memory'
        ? ap.pep.createMemoryReplayStore({ maxEntries: profile.verifyPool * 2 + 16 })
        : ap.redis.createRedisReplayStore({ client: redisClient, prefix });
    return ap.pep.createPermitVerifier({ keys: publicKey, issuer, audience, replayStore });
  };
  const clients = [
    {
      name: clientNames[0],
      prepare: async () => (permit) =>
        jwtVerify(permit, publicKey, joseOptions).then((r) => r.payload.jti !== undefined),
    },
    {
      name: clientNames[1],
      skip: why,
      prepare: async () => {
        const v = await makeVerifier('memory');
        await v.verify(warm[0], action);
        return (permit) => v.verify(permit, action).then((c) => c.jti !== undefined);
      },
    },
    {
      name: clientNames[2],
      skip: redisWhy,
      prepare: async () => {
        const v = await makeVerifier('redis');
        await v.verify(warm[0], action);
        return (permit) => v.verify(permit, action).then((c) => c.jti !== undefined);
      },
    },
    {
      // The floor for the Redis store: jose plus one SET NX PXAT on the same connection, by hand.
      name: clientNames[3],
      skip: redisWhy,
      prepare: async () => {
        batch++;
        const prefix = `bench:hand:${process.pid}:${batch}:`;
        return async (permit) => {
          const { payload } = await jwtVerify(permit, publicKey, joseOptions);
          const ok = await redisClient.set(`${prefix}${payload.jti}`, '1', 'PXAT', (payload.exp + 360) * 1000, 'NX');
          return ok === 'OK';
        };
      },
    },
  ];
  const live = clients.filter((c) => !c.skip);
  const cells = new Map();
  for (const c of live) for (const n of levels) cells.set(`${c.name}|${n}`, createCell());
  // warm-up: one pass of the pool per client (fresh stores, so every jti is new again)
  for (const c of live) {
    const fn = await c.prepare();
    let i = 0;
    await runCount(() => fn(pool[i++]), 16, pool.length, createCell());
  }
  for (let r = 0; r < profile.verifyRounds; r++) {
    log(`verify: round ${r + 1}/${profile.verifyRounds}`);
    for (const n of levels) {
      for (let k = 0; k < live.length; k++) {
        const c = live[(k + r) % live.length];
        // a rotating slice of the pool, through a verifier with a fresh store (every jti is new to it)
        const fn = await c.prepare();
        let i = ((r * levels.length + levels.indexOf(n)) * profile.verifyBatch) % pool.length;
        const cell = cells.get(`${c.name}|${n}`);
        const count = Math.min(profile.verifyBatch, pool.length);
        const ok = (res, ms) => (res === true ? ms : undefined);
        await runCount(() => fn(pool[i++ % pool.length]), n, count, cell, ok);
      }
    }
  }
  for (const c of clients) {
    for (const n of levels) {
      if (c.skip) rows.push(skippedRow('verify', c.name, n, c.skip));
      else rows.push(rowOf('verify', c.name, n, cells.get(`${c.name}|${n}`)));
    }
  }
}

/* ------------------------------------------------------------------------------------------------ */
/* Section 3: fail-closed latency                                                                   */
/* ------------------------------------------------------------------------------------------------ */

/** Alternating slices of the refused-connection pair (bare error, agent-pep). */
const REFUSED_SLICES = 10;

async function benchFailClosed(stub, ap, pepWhy, profile, rows, log) {
  const port = await closedPort();
  const refusedOrigin = `http://${HOST}:${port}`;
  const refusedUrl = `${refusedOrigin}${AUTHORIZE_PATH}`;
  const text = floorRequest('input', ap.version);

  log(`fail-closed: refused connection (${refusedOrigin})`);
  const isRefused = (e, ms) => (e instanceof Error && e.code === 'ECONNREFUSED' ? ms : undefined);
  const blockUnreachable = (d, ms) =>
    d && d.verdict === 'BLOCK' && d.synthesized?.code === 'pdp_unreachable' ? ms : undefined;
  const pepFor = (opts) =>
    ap.pep.createPep(pepOptions({ url: refusedOrigin, jwks: stub.jwks, issuer: stub.issuer }, opts));

  // The gated pair, the bare undici error and agent-pep with retries 0, side by side: in alternating
  // slices (as the decision rows alternate their rounds), so that a machine that slows down or speeds
  // up during the section weighs on both alike.
  const single = { name: 'agent-pep checkInput (retries 0)', c: 1 };
  const singleCell = createCell();
  const singlePep = pepWhy ? undefined : pepFor({ retries: 0 });
  const pool = new Pool(refusedOrigin);
  const bare = createCell();
  try {
    const pair = [
      {
        call: () => request(refusedUrl, { method: 'POST', headers: text.headers, body: text.body, dispatcher: pool }),
        cell: bare,
        measure: isRefused,
      },
    ];
    if (singlePep)
      pair.push({ call: () => singlePep.checkInput(CONTENT), cell: singleCell, measure: blockUnreachable });
    for (const side of pair)
      await runCount(side.call, 1, Math.min(50, profile.refusedSamples), createCell(), side.measure);
    const slices = Math.min(REFUSED_SLICES, profile.refusedSamples);
    for (let k = 0; k < slices; k++) {
      const n =
        Math.floor(((k + 1) * profile.refusedSamples) / slices) - Math.floor((k * profile.refusedSamples) / slices);
      for (let j = 0; j < pair.length; j++) {
        const side = pair[(j + k) % pair.length];
        await runCount(side.call, 1, n, side.cell, side.measure);
      }
    }
  } finally {
    await pool.close().catch(() => {});
    await singlePep?.close().catch(() => {});
  }
  rows.push(rowOf('refused', 'undici.request error', 1, bare));
  rows.push(
    singlePep
      ? rowOf('refused', single.name, single.c, singleCell)
      : skippedRow('refused', single.name, single.c, pepWhy),
  );

  // With the default retries (2): the jittered backoff waits dominate; reported, not gated.
  const defaults = { name: 'agent-pep checkInput (defaults)', n: profile.refusedDefaultSamples, c: 8 };
  if (pepWhy) {
    rows.push(skippedRow('refused', defaults.name, defaults.c, pepWhy));
  } else {
    const pep = pepFor({});
    const cell = createCell();
    try {
      await runCount(
        () => pep.checkInput(CONTENT),
        defaults.c,
        Math.min(defaults.n, 20),
        createCell(),
        blockUnreachable,
      );
      await runCount(() => pep.checkInput(CONTENT), defaults.c, defaults.n, cell, blockUnreachable);
    } finally {
      await pep.close().catch(() => {});
    }
    rows.push(rowOf('refused', defaults.name, defaults.c, cell));
  }

  log(`fail-closed: hung PDP (timeoutMs ${HUNG_TIMEOUT_MS})`);
  const name = `agent-pep checkInput (timeoutMs ${HUNG_TIMEOUT_MS}), minus timeoutMs`;
  if (pepWhy) {
    rows.push(skippedRow('hung', name, 1, pepWhy));
    return;
  }
  const pep = ap.pep.createPep(
    pepOptions({ url: stub.hungUrl, jwks: stub.jwks, issuer: stub.issuer }, { timeoutMs: HUNG_TIMEOUT_MS }),
  );
  const cell = createCell();
  try {
    const overshoot = (d, ms) =>
      d && d.verdict === 'BLOCK' && d.synthesized?.code === 'pdp_timeout'
        ? Math.max(0.001, ms - HUNG_TIMEOUT_MS)
        : undefined;
    await runCount(() => pep.checkInput(CONTENT), 1, 2, createCell(), overshoot);
    await runCount(() => pep.checkInput(CONTENT), 1, profile.hungSamples, cell, overshoot);
  } finally {
    await pep.close().catch(() => {});
  }
  // ops/s is meaningless here (every call waits timeoutMs); the percentiles are the overshoot past the deadline
  rows.push({ ...rowOf('hung', name, 1, cell), ops_per_s: null });
}

/* ------------------------------------------------------------------------------------------------ */
/* Section 4: memory, in a child process with --expose-gc (a clean heap)                            */
/* ------------------------------------------------------------------------------------------------ */

async function memoryChild() {
  const { url, jwks, issuer, checkpoints } = JSON.parse(process.env.AGENT_PEP_BENCH_MEMORY ?? '{}');
  const { createPep } = await import('agent-pep');
  const gc = globalThis.gc;
  const settle = async () => {
    for (let i = 0; i < 4; i++) {
      gc();
      await new Promise((r) => setImmediate(r));
    }
  };
  // Open sockets of this process: /proc/self/fd on Linux (idle keep-alive sockets are unref'd, so
  // getActiveResourcesInfo() does not list them); elsewhere the ref'd TCP handles only.
  const tcp = () => {
    try {
      return readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:');
        } catch {
          return false;
        }
      }).length;
    } catch {
      return process.getActiveResourcesInfo().filter((x) => x === 'TCPSocketWrap').length;
    }
  };
  const socketsBefore = tcp();
  const pep = createPep(pepOptions({ url, jwks, issuer }));
  let done = 0;
  let bad = 0;
  const run = async (upTo) => {
    const t0 = performance.now();
    const start = done;
    await Promise.all(
      Array.from({ length: 64 }, async (_, w) => {
        let k = w;
        while (done < upTo) {
          done++;
          k++;
          const d = k % 2 === 0 ? await pep.checkInput(CONTENT) : await pep.authorizeAction(TOOL, ARGS);
          if (d.verdict !== 'ALLOW' || d.synthesized) bad++;
        }
      }),
    );
    return ((done - start) / (performance.now() - t0)) * 1000;
  };
  const points = [];
  for (const n of checkpoints) {
    const ops = await run(n);
    await settle();
    const m = process.memoryUsage();
    points.push({ decisions: done, heapUsed: m.heapUsed, rss: m.rss, ops_per_s: Math.round(ops) });
  }
  const socketsOpen = tcp() - socketsBefore;
  await pep.close();
  await new Promise((r) => setTimeout(r, 100));
  const socketsAfterClose = tcp() - socketsBefore;
  process.stdout.write(`MEMORY_RESULT ${JSON.stringify({ points, bad, socketsOpen, socketsAfterClose })}\n`);
}

async function benchMemory(stub, pepWhy, profile, rows, log, cleanups) {
  const name = 'agent-pep checkInput+authorizeAction';
  if (pepWhy) {
    for (const n of profile.memory) rows.push(skippedRow('memory', `${name} after ${n}`, 64, pepWhy));
    rows.push(skippedRow('memory', 'agent-pep open sockets after close()', 64, pepWhy));
    return null;
  }
  log(`memory: ${profile.memory.join(' and ')} decisions in a child process (--expose-gc)`);
  const env = {
    ...process.env,
    AGENT_PEP_BENCH_MEMORY: JSON.stringify({
      url: stub.url,
      jwks: stub.jwks,
      issuer: stub.issuer,
      checkpoints: profile.memory,
    }),
  };
  const child = spawn(process.execPath, ['--expose-gc', THIS_FILE, '--memory-child'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  cleanups.push(kill);
  let out = '';
  child.stdout.on('data', (c) => {
    out += c;
  });
  const code = await new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 300_000);
    child.once('exit', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  const line = out.split('\n').find((l) => l.startsWith('MEMORY_RESULT '));
  if (code !== 0 || !line) {
    rows.push(skippedRow('memory', name, 64, `memory child failed (exit ${code})`));
    return null;
  }
  const result = JSON.parse(line.slice('MEMORY_RESULT '.length));
  const mb = (b) => Math.round((b / 1048576) * 10) / 10;
  for (const p of result.points) {
    rows.push({
      scenario: 'memory',
      client: `${name} after ${p.decisions}`,
      concurrency: 64,
      p50_ms: null,
      p99_ms: null,
      ops_per_s: p.ops_per_s,
      heap_mb: mb(p.heapUsed),
      rss_mb: mb(p.rss),
      errors: result.bad,
    });
  }
  rows.push({
    scenario: 'memory',
    client: 'agent-pep open sockets after close()',
    concurrency: 64,
    p50_ms: null,
    p99_ms: null,
    ops_per_s: null,
    open_sockets: result.socketsAfterClose,
    open_sockets_before_close: result.socketsOpen,
  });
  return result;
}

/* ------------------------------------------------------------------------------------------------ */
/* Ratios, table, main                                                                              */
/* ------------------------------------------------------------------------------------------------ */

function find(rows, scenario, client, concurrency) {
  return rows.find((r) => r.scenario === scenario && r.client === client && r.concurrency === concurrency);
}

const div = (a, b) => (a == null || b == null || b === 0 ? null : Math.round((a / b) * 1000) / 1000);

function medianOf(xs) {
  const v = [...xs].sort((a, b) => a - b);
  const n = v.length;
  return n % 2 === 1 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const round3r = (x) => Math.round(x * 1000) / 1000;

/**
 * A paired ratio with its spread: in each round, `a`'s batch over `b`'s (run in the same round, minutes
 * apart at most); `value` is the median of those per-round ratios, `min` and `max` their extremes,
 * `rounds` how many. A spike that lands on one batch (a GC of the stub, another process) moves one
 * round's ratio, not the figure. Both rows need one batch a round, the same number; else (and for rows
 * of other sections) the ratio of the whole-run figures, without a spread (a plain number). `field` is
 * `ops_per_s` or `p50_ms`; `terms` more rows, as `[c, d]`, for a ratio of ratios (a/b) / (c/d).
 * @returns `{ value, min, median, max, rounds }`, a number, or null when a figure is missing
 */
export function pairedSpread(field, a, b, ...terms) {
  const rows = [a, b, ...terms];
  const series = rows.map((r) => r?.[`batch_${field}`]);
  const n = series[0]?.length;
  if (n > 1 && series.every((xs) => Array.isArray(xs) && xs.length === n)) {
    const per = [];
    for (let i = 0; i < n; i++) {
      const v = series.map((xs) => xs[i]);
      if (v.some((x) => x == null || x === 0)) continue;
      per.push(terms.length === 0 ? v[0] / v[1] : v[0] / v[1] / (v[2] / v[3]));
    }
    if (per.length === 0) return null;
    const median = round3r(medianOf(per));
    return {
      value: median,
      min: round3r(Math.min(...per)),
      median,
      max: round3r(Math.max(...per)),
      rounds: per.length,
    };
  }
  const whole = rows.map((r) => r?.[field]);
  return terms.length === 0 ? div(whole[0], whole[1]) : div(div(whole[0], whole[1]), div(whole[2], whole[3]));
}

/** {@link pairedSpread}'s figure alone (the median of the per-round ratios, or the whole-run ratio). */
export function paired(field, a, b, ...terms) {
  return figureOf(pairedSpread(field, a, b, ...terms));
}

/** The figure of a ratio declared as a number, null or a spread (`{ value, ... }`). */
const figureOf = (r) => (r !== null && typeof r === 'object' ? r.value : (r ?? null));

/** A spread scaled by `k` (a calls-per-second ratio from an ops ratio). */
function scaled(r, k) {
  if (r === null || k === null) return null;
  if (typeof r !== 'object') return round3r(r * k);
  const x = (v) => round3r(v * k);
  return { value: x(r.value), min: x(r.min), median: x(r.median), max: x(r.max), rounds: r.rounds };
}

/**
 * Every ratio's figure, and the spread of those declared with {@link pairedSpread} (the per-round
 * ratios' min, median and max) into `spreads` when given: the machinery is the same for every ratio,
 * gated or not, whatever section it comes from (a ratio declared as a plain number has no spread).
 * The gate reads the figure, which for a paired ratio is the median.
 */
export function computeRatios(rows, memory, spreads = undefined) {
  const declared = declareRatios(rows, memory);
  const ratios = {};
  for (const [key, r] of Object.entries(declared)) {
    ratios[key] = figureOf(r);
    if (spreads !== undefined && r !== null && typeof r === 'object') {
      spreads[key] = { min: r.min, median: r.median, max: r.max, rounds: r.rounds };
    }
  }
  return ratios;
}

/**
 * Where a gated ratio's rounds disagree by more than its distance to the target: the per-round
 * spread (max - min) is wider than |median - target|, so another run could read the other verdict.
 * @returns `[{ key, median, min, max, spread, distance, target }]`
 */
export function narrowMarginsOf(ratios, spreads) {
  const out = [];
  for (const [key, t] of Object.entries(TARGETS)) {
    const s = spreads?.[key];
    const v = ratios?.[key];
    if (t.op === 'info' || s === undefined || v === null || v === undefined) continue;
    const spread = round3r(s.max - s.min);
    const distance = round3r(Math.abs(v - t.value));
    if (spread > distance)
      out.push({ key, median: v, min: s.min, max: s.max, spread, distance, target: `${t.op} ${t.value}` });
  }
  return out;
}

/** One line per narrow margin (see {@link narrowMarginsOf}). */
export function formatNarrowMargins(narrow) {
  return narrow
    .map(
      (m) =>
        `SPREAD ${m.key}: median ${m.median} (rounds ${m.min} to ${m.max}, spread ${m.spread}) is ${m.distance} from its target ${m.target}: the spread is wider`,
    )
    .join('\n');
}

/**
 * The ratios as declared: a paired ratio as its spread ({@link pairedSpread}), any other as a number.
 * Declare a new paired ratio with `pairedSpread` (or `ops`) and it gets its spread in results.json,
 * the table and BENCHMARKS.md with nothing else to do.
 */
function declareRatios(rows, memory) {
  const d = (client, n) => find(rows, 'decision', client, n) ?? {};
  const ci1 = d('agent-pep checkInput', 1);
  const ci64 = d('agent-pep checkInput', 64);
  const verifyMem = find(rows, 'verify', 'verify (memory store)', 1) ?? {};
  const jose = find(rows, 'verify', 'jose jwtVerify', 1) ?? {};
  const refused = find(rows, 'refused', 'agent-pep checkInput (retries 0)', 1) ?? {};
  const bareErr = find(rows, 'refused', 'undici.request error', 1) ?? {};
  const hung = rows.find((r) => r.scenario === 'hung') ?? {};
  const pts = memory?.points ?? [];
  const floor64 = d(FLOOR, 64);
  const ops = (client, n, base, baseN = n) => pairedSpread('ops_per_s', d(client, n), d(base, baseN));
  /** A batch-section ratio of calls per second: the paired ops ratio times the calls an op makes on each side. */
  const calls = (a, b) => {
    const ra = find(rows, 'batch', a, BATCH_CONCURRENCY);
    const rb = find(rows, 'batch', b, BATCH_CONCURRENCY);
    const per = (r) => (r?.ops_per_s ? r.calls_per_s / r.ops_per_s : null);
    return per(ra) === null || per(rb) === null ? null : scaled(pairedSpread('ops_per_s', ra, rb), per(ra) / per(rb));
  };
  return {
    checkInput_ops_c64_vs_floor: ops('agent-pep checkInput', 64, FLOOR),
    checkInput_ops_c64_vs_text_floor: ops('agent-pep checkInput', 64, FLOOR_TEXT),
    text_floor_vs_floor_c64: ops(FLOOR_TEXT, 64, FLOOR),
    authorizeAction_ops_c64_vs_floor: ops('agent-pep authorizeAction', 64, FLOOR_ACTION),
    authorizeAction_ops_c64_vs_permit_floor: ops('agent-pep authorizeAction', 64, FLOOR_PERMIT),
    authorizeAction_no_rule5_ops_c64_vs_floor: ops('agent-pep authorizeAction (no permits option)', 64, FLOOR_ACTION),
    checkInput_p50_c1_vs_floor: pairedSpread('p50_ms', ci1, d(FLOOR, 1)),
    telemetry_vs_otel_undici_c64: pairedSpread(
      'ops_per_s',
      d('agent-pep checkInput (telemetry)', 64),
      ci64,
      d(FLOOR_OTEL, 64),
      floor64,
    ),
    otel_undici_floor_vs_floor_c64: ops(FLOOR_OTEL, 64, FLOOR),
    checkInput_p50_c1_vs_undici: pairedSpread('p50_ms', ci1, d('undici.request', 1)),
    checkInput_ops_c64_vs_undici: ops('agent-pep checkInput', 64, 'undici.request'),
    checkInput_ops_c64_vs_opa: ops('agent-pep checkInput', 64, 'opa evaluate'),
    checkInput_ops_c64_vs_cerbos: ops('agent-pep checkInput', 64, 'cerbos checkResource'),
    authorizeAction_ops_c64_vs_undici: ops('agent-pep authorizeAction', 64, 'undici.request (action)'),
    authorizeAction_3_interceptors_vs_none_c64: ops(
      'agent-pep authorizeAction (3 interceptors)',
      64,
      'agent-pep authorizeAction',
    ),
    checkInput_3_interceptors_vs_none_c64: ops('agent-pep checkInput (3 interceptors)', 64, 'agent-pep checkInput'),
    checkInput_telemetry_vs_none_c64: ops('agent-pep checkInput (telemetry)', 64, 'agent-pep checkInput'),
    checkInput_telemetry_noop_vs_none_c64: ops(
      'agent-pep checkInput (telemetry, API no-op)',
      64,
      'agent-pep checkInput',
    ),
    checkInput_telemetry_sampled_vs_none_c64: ops(
      'agent-pep checkInput (telemetry, 1% sampled)',
      64,
      'agent-pep checkInput',
    ),
    verify_ops_vs_jose: div(verifyMem.ops_per_s, jose.ops_per_s),
    verify_redis_vs_jose_plus_setnx: div(
      find(rows, 'verify', 'verify (redis store)', 16)?.ops_per_s,
      find(rows, 'verify', 'jose jwtVerify + redis SET NX by hand', 16)?.ops_per_s,
    ),
    refused_block_p99_vs_undici_error: div(refused.p99_ms, bareErr.p99_ms),
    checkInput_authzen_ops_c64_vs_agent_pep: ops('agent-pep checkInput (authzen)', 64, 'agent-pep checkInput'),
    authorizeAction_authzen_ops_c64_vs_agent_pep: ops(
      'agent-pep authorizeAction (authzen)',
      64,
      'agent-pep authorizeAction',
    ),
    authorizeActions_8_calls_per_s_vs_8_singles_c16: calls(BATCH_PEP, BATCH_SINGLES),
    authorizeActions_8_vs_floor_batch_c16: calls(BATCH_PEP, FLOOR_BATCH),
    visibleTools_50_vs_singles_c16: calls(
      `agent-pep visibleTools (${VISIBLE_SIZE} tools, authzen)`,
      `agent-pep ${VISIBLE_SIZE} x authorizeAction simulated (authzen)`,
    ),
    checkInput_authzen_vs_cerbos_http_real_cerbos_c16: pairedSpread(
      'ops_per_s',
      find(rows, 'cerbos', 'agent-pep checkInput (authzen, real Cerbos)', BATCH_CONCURRENCY),
      find(rows, 'cerbos', '@cerbos/http checkResource (real Cerbos)', BATCH_CONCURRENCY),
    ),
    devpdp_session200_vs_empty: pairedSpread(
      'ops_per_s',
      find(rows, 'sessions', SESSION_ROWS.full, SESSION_CONCURRENCY),
      find(rows, 'sessions', SESSION_ROWS.empty, SESSION_CONCURRENCY),
    ),
    devpdp_session_redis_vs_memory: pairedSpread(
      'ops_per_s',
      find(rows, 'sessions', SESSION_ROWS.redis, SESSION_CONCURRENCY),
      find(rows, 'sessions', SESSION_ROWS.full, SESSION_CONCURRENCY),
    ),
    devpdp_vs_cerbos_c16: pairedSpread(
      'ops_per_s',
      find(rows, 'devpdp', DEVPDP_ROWS.contract, DEVPDP_CONCURRENCY),
      find(rows, 'devpdp', DEVPDP_ROWS.cerbos, DEVPDP_CONCURRENCY),
    ),
    devpdp_demo_policy_vs_contract_policy_c16: pairedSpread(
      'ops_per_s',
      find(rows, 'devpdp', DEVPDP_ROWS.demo, DEVPDP_CONCURRENCY),
      find(rows, 'devpdp', DEVPDP_ROWS.contract, DEVPDP_CONCURRENCY),
    ),
    hook_start_vs_node_fetch: div(
      find(rows, 'startup', STARTUP_ROWS.hook, 1)?.p50_ms,
      find(rows, 'startup', STARTUP_ROWS.fetch, 1)?.p50_ms,
    ),
    hook_http_p50_ms: find(rows, 'startup', STARTUP_ROWS.hookHttp, 1)?.p50_ms ?? null,
    hook_http_vs_process: div(
      find(rows, 'startup', STARTUP_ROWS.hookHttp, 1)?.p50_ms,
      find(rows, 'startup', STARTUP_ROWS.hook, 1)?.p50_ms,
    ),
    import_vs_undici: div(
      find(rows, 'startup', STARTUP_ROWS.importPep, 1)?.p50_ms,
      find(rows, 'startup', STARTUP_ROWS.importUndici, 1)?.p50_ms,
    ),
    import_and_client_vs_undici: div(
      find(rows, 'startup', STARTUP_ROWS.importAndClient, 1)?.p50_ms,
      find(rows, 'startup', STARTUP_ROWS.importUndici, 1)?.p50_ms,
    ),
    hung_overshoot_ms: hung.p99_ms ?? null,
    heap_growth_ratio: pts.length >= 2 ? div(pts[pts.length - 1].heapUsed, pts[0].heapUsed) : null,
    open_sockets_after_close: rows.find((r) => r.open_sockets !== undefined)?.open_sockets ?? null,
  };
}

/**
 * The misses of a results object: each target whose ratio is off, with how far.
 * @returns `[{ key, value, target, short }]`, empty when every target is met (an absent figure is a miss)
 */
export function missesOf(ratios) {
  const misses = [];
  for (const [key, t] of Object.entries(TARGETS)) {
    if (t.op === 'info') continue;
    const value = ratios[key];
    if (verdictOf(key, value) === 'PASS') continue;
    const short = value === null || value === undefined ? null : Math.round(Math.abs(value - t.value) * 1000) / 1000;
    misses.push({ key, value: value ?? null, target: `${t.op} ${t.value}`, short });
  }
  return misses;
}

/** One line per miss: the figure, the target, and how far it is. */
export function formatMisses(misses) {
  return misses
    .map((m) =>
      m.value === null
        ? `MISS ${m.key}: no figure (target ${m.target})`
        : `MISS ${m.key}: ${m.value}, target ${m.target}: off by ${m.short}`,
    )
    .join('\n');
}

/** The sections of a run, in order; `--only` names some of them. */
export const SECTIONS = Object.freeze([
  'decisions',
  'batch',
  'cerbos',
  'devpdp',
  'verify',
  'failclosed',
  'sessions',
  'startup',
  'memory',
]);

/**
 * Reads the command line: `--quick`, `--smoke`, `--out PATH`, `--only SECTION[,SECTION...]` (of
 * {@link SECTIONS}; for profiling one part, never for the record). A full run writes bench/results.json
 * unless `--out` names another path; `--quick`, `--smoke` and `--only` write nowhere unless `--out` is given.
 * @throws Error on an unknown flag, `--out` without a path, or an unknown section
 */
export function parseArgs(argv, defaultOut) {
  let profile = PROFILES.full;
  let out;
  let only;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') profile = PROFILES.quick;
    else if (a === '--smoke') profile = PROFILES.smoke;
    else if (a === '--out') {
      out = argv[++i];
      if (!out || out.startsWith('--')) throw new Error('--out needs a path');
    } else if (a.startsWith('--out=')) out = a.slice('--out='.length);
    else if (a === '--only' || a.startsWith('--only=')) {
      const list = a === '--only' ? argv[++i] : a.slice('--only='.length);
      if (!list || list.startsWith('--')) throw new Error(`--only needs sections (${SECTIONS.join(', ')})`);
      only = list.split(',');
      const unknown = only.find((x) => !SECTIONS.includes(x));
      if (unknown !== undefined) throw new Error(`--only: unknown section ${unknown} (${SECTIONS.join(', ')})`);
    } else throw new Error(`unknown flag ${a}`);
  }
  if (out === undefined) out = profile === PROFILES.full && only === undefined ? defaultOut : null;
  return { profile, out, only };
}

/** The targets of issue 16 (and of issues 10, 13, 14, 25, 30 and 43 for their rows); a MISS makes the bench exit 1. */
export const TARGETS = {
  checkInput_ops_c64_vs_floor: { op: '>=', value: 0.9 },
  // Information (round 4, fourth session): the same floor doing what the contract requires of every
  // text decision (a fresh request id and request text, the deadline, the answer's checks), and what
  // that work alone costs the bare floor above.
  checkInput_ops_c64_vs_text_floor: { op: 'info', value: 0.9 },
  text_floor_vs_floor_c64: { op: 'info', value: 0.9 },
  // Issue 43: against a floor that does none of the contract's work (rule 5, the answer's checks);
  // replaced by authorizeAction_ops_c64_vs_permit_floor, kept for information.
  authorizeAction_ops_c64_vs_floor: { op: 'info', value: 0.85 },
  authorizeAction_ops_c64_vs_permit_floor: { op: '>=', value: 0.9 },
  authorizeAction_no_rule5_ops_c64_vs_floor: { op: 'info', value: 0.85 },
  checkInput_p50_c1_vs_floor: { op: '<=', value: 1.1 },
  telemetry_vs_otel_undici_c64: { op: '>=', value: 1 },
  otel_undici_floor_vs_floor_c64: { op: 'info', value: 1 },
  checkInput_p50_c1_vs_undici: { op: '<=', value: 1.1 },
  checkInput_ops_c64_vs_undici: { op: '>=', value: 0.9 },
  checkInput_ops_c64_vs_opa: { op: '>=', value: 8 },
  checkInput_ops_c64_vs_cerbos: { op: '>=', value: 4 },
  authorizeAction_ops_c64_vs_undici: { op: '>=', value: 0.85 },
  authorizeAction_3_interceptors_vs_none_c64: { op: '>=', value: 0.95 },
  checkInput_3_interceptors_vs_none_c64: { op: '>=', value: 0.95 },
  // Round 2's target (0.9), priced against no telemetry at all: issue 30 replaced it with
  // telemetry_vs_otel_undici_c64 (the OpenTelemetry SDK alone costs more than 10%); kept for information.
  checkInput_telemetry_vs_none_c64: { op: 'info', value: 0.9 },
  checkInput_telemetry_noop_vs_none_c64: { op: 'info', value: 1 },
  checkInput_telemetry_sampled_vs_none_c64: { op: 'info', value: 1 },
  verify_ops_vs_jose: { op: '>=', value: 0.9 },
  verify_redis_vs_jose_plus_setnx: { op: '>=', value: 0.8 },
  open_sockets_after_close: { op: '<=', value: 0 },
  refused_block_p99_vs_undici_error: { op: '<=', value: 1.5 },
  hung_overshoot_ms: { op: '<=', value: 20 },
  heap_growth_ratio: { op: '<=', value: 1.1 },
  checkInput_authzen_ops_c64_vs_agent_pep: { op: 'info', value: 1 },
  authorizeAction_authzen_ops_c64_vs_agent_pep: { op: 'info', value: 1 },
  // Issue 43: replaced by authorizeActions_8_vs_floor_batch_c16 (the same evaluations request and
  // per-item work by hand); kept for information.
  authorizeActions_8_calls_per_s_vs_8_singles_c16: { op: 'info', value: 4 },
  authorizeActions_8_vs_floor_batch_c16: { op: '>=', value: 0.9 },
  visibleTools_50_vs_singles_c16: { op: '>=', value: 5 },
  checkInput_authzen_vs_cerbos_http_real_cerbos_c16: { op: '>=', value: 0.9 },
  // issue 41 raised them from 0.8 and 0.5
  devpdp_session200_vs_empty: { op: '>=', value: 0.9 },
  devpdp_session_redis_vs_memory: { op: '>=', value: 0.6 },
  devpdp_vs_cerbos_c16: { op: '>=', value: 1 },
  devpdp_demo_policy_vs_contract_policy_c16: { op: 'info', value: 1 },
  hook_start_vs_node_fetch: { op: '<=', value: 1.0 },
  hook_http_p50_ms: { op: 'info', value: 1 },
  hook_http_vs_process: { op: '<=', value: 0.1 },
  import_vs_undici: { op: '<=', value: 1.3 },
  import_and_client_vs_undici: { op: 'info', value: 1 },
};

export function verdictOf(key, value) {
  const t = TARGETS[key];
  if (t === undefined || t.op === 'info') return 'info';
  if (value === null || value === undefined) return 'n/a';
  const ok = t.op === '<=' ? value <= t.value : t.op === '>=' ? value >= t.value : value > t.value;
  return ok ? 'PASS' : 'MISS';
}

function pad(s, n, right = false) {
  const t = s === null || s === undefined ? '-' : String(s);
  return right ? t.padStart(n) : t.padEnd(n);
}

export function formatTable(results) {
  const lines = [];
  lines.push(
    `agent-pep bench (${results.profile}) · node ${results.node} · ${results.cpus.count}x ${results.cpus.model}` +
      (results.pinned
        ? ` · pinned: clients CPU ${results.pinned.client} (${results.pinned.sections?.join(', ')}), servers CPU ${results.pinned.servers}`
        : ' · not pinned'),
  );
  lines.push('');
  lines.push(
    `${pad('scenario', 9)} ${pad('client', 52)} ${pad('conc', 4, true)} ${pad('p50 ms', 9, true)} ${pad('p99 ms', 9, true)} ${pad('ops/s', 8, true)}  notes`,
  );
  lines.push('-'.repeat(110));
  for (const r of results.rows) {
    const notes = [];
    if (r.skipped) notes.push(`SKIPPED: ${String(r.note).slice(0, 90)}`);
    else {
      if (r.errors) notes.push(`${r.errors} invalid of ${r.samples ?? '?'}`);
      if (r.note) notes.push(r.note);
      if (r.heap_mb !== undefined) notes.push(`heap ${r.heap_mb} MB, rss ${r.rss_mb} MB`);
      if (r.open_sockets !== undefined)
        notes.push(`${r.open_sockets} open (${r.open_sockets_before_close} before close)`);
    }
    lines.push(
      `${pad(r.scenario, 9)} ${pad(r.client, 52)} ${pad(r.concurrency, 4, true)} ${pad(r.p50_ms?.toFixed(3), 9, true)} ${pad(r.p99_ms?.toFixed(3), 9, true)} ${pad(r.ops_per_s, 8, true)}  ${notes.join('; ')}`,
    );
  }
  lines.push('');
  lines.push(
    `${pad('ratio', 48)} ${pad('value', 9, true)}  ${pad('target', 10)} ${pad('result', 6)} rounds: min .. max`,
  );
  lines.push('-'.repeat(100));
  const narrow = new Set(narrowMarginsOf(results.ratios, results.ratio_spreads).map((m) => m.key));
  for (const [k, v] of Object.entries(results.ratios)) {
    const t = TARGETS[k] ?? { op: 'info', value: '-' };
    const target = t.op === 'info' ? `(ref ${t.value})` : `${t.op} ${t.value}`;
    const s = results.ratio_spreads?.[k];
    const spread = s
      ? `${s.min} .. ${s.max}${narrow.has(k) ? '  (spread wider than the distance to the target)' : ''}`
      : '';
    lines.push(`${pad(k, 48)} ${pad(v, 9, true)}  ${pad(target, 10)} ${pad(verdictOf(k, v), 6)} ${spread}`);
  }
  const def = find(results.rows, 'refused', 'agent-pep checkInput (defaults)', 8);
  const bare = find(results.rows, 'refused', 'undici.request error', 1);
  if (def?.p99_ms != null && bare?.p99_ms) {
    lines.push(
      `  (refused with the default retries: 2, time to BLOCK p99 ${def.p99_ms} ms = ${div(def.p99_ms, bare.p99_ms)}x the bare error: the jittered backoff waits dominate)`,
    );
  }
  return lines.join('\n');
}

/**
 * Runs every scenario with a profile; returns the results object (and writes it to `out` when given).
 * @param {{ profile: object, out?: string | null, log?: (s: string) => void }} options
 */
export async function runBench({ profile, out = null, only, log = (s) => process.stderr.write(`· ${s}\n`) }) {
  const runs = (section) => only === undefined || only.includes(section);
  const t0 = performance.now();
  const loadAtStart = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const cleanups = [];
  const cleanup = async () => {
    while (cleanups.length > 0)
      await cleanups
        .pop()()
        .catch(() => {});
  };
  const onSignal = (sig) => {
    cleanup().finally(() => process.exit(sig === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const rows = [];
  const ap = await loadAgentPep();
  let memory = null;
  const cpuCount = os.availableParallelism?.() ?? os.cpus().length;
  const pinned = pinClient();
  try {
    const stub = await spawnStub();
    cleanups.push(stub.stop);
    pinServer(stub.pid);
    if (pinned)
      log(
        `pinned: this process on CPU ${pinned.client} (until the fail-closed section), the servers on CPU ${pinned.servers}`,
      );
    log(`stub pid ${stub.pid} at ${stub.url} (hung: ${stub.hungUrl})`);
    const pepWhy = await probePep(ap, stub);
    if (pepWhy) log(`agent-pep rows skipped: ${pepWhy}`);
    if (runs('decisions')) await benchDecisions(stub, ap, pepWhy, profile, rows, log);
    if (runs('batch')) await benchBatch(stub, ap, pepWhy, profile, rows, log);
    if (runs('batch')) await benchVisibility(stub, ap, pepWhy, profile, rows, log);
    if (runs('cerbos')) await benchCerbos(ap, pepWhy, profile, rows, log, cleanups);
    if (runs('devpdp')) {
      const fixed = { agentId: AGENT_ID, session: SESSION, content: CONTENT };
      await benchDevPdp(ap, pepWhy, profile, rows, log, cleanups, ROOT, fixed);
    }
    if (runs('verify')) await benchVerify(ap, profile, rows, log, cleanups);
    // The tail-latency and process sections run unpinned (lib.js unpinClient).
    unpinClient();
    if (runs('failclosed')) await benchFailClosed(stub, ap, pepWhy, profile, rows, log);
    if (runs('sessions')) await benchSessions(ap, profile, rows, log, cleanups, ROOT);
    if (runs('startup')) await benchStartup(stub, profile, rows, log, ROOT);
    if (runs('memory')) memory = await benchMemory(stub, pepWhy, profile, rows, log, cleanups);
  } finally {
    await cleanup();
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  }
  const cpus = os.cpus();
  const results = {
    profile: profile.name,
    node: process.version,
    cpus: { count: cpuCount, model: cpus[0]?.model?.trim() ?? 'unknown' },
    versions: {
      'agent-pep': ap.version,
      undici: versionOf('undici'),
      'undici (node bundled, fetch)': process.versions.undici,
      '@open-policy-agent/opa': versionOf('@open-policy-agent/opa'),
      '@cerbos/http': versionOf('@cerbos/http'),
      cerbos: ap.cerbosVersion ?? 'not run',
      jose: versionOf('jose'),
      ioredis: versionOf('ioredis'),
      'redis-server': ap.redisVersion ?? 'not run',
    },
    duration_s: Math.round((performance.now() - t0) / 100) / 10,
    load_average_at_start: loadAtStart,
    pinned,
    rows,
    ratios: {},
    // Each paired ratio's per-round ratios: { min, median, max, rounds } (the figure is the median).
    ratio_spreads: {},
  };
  results.ratios = computeRatios(rows, memory, results.ratio_spreads);
  if (out) writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  return results;
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv.includes('--memory-child')) {
    await memoryChild();
    return;
  }
  let parsed;
  try {
    parsed = parseArgs(argv, fileURLToPath(new URL('results.json', import.meta.url)));
  } catch (err) {
    process.stderr.write(
      `bench: ${err.message} (usage: npm run bench -- [--quick | --smoke] [--out PATH] [--only SECTION,...])\n`,
    );
    process.exit(2);
  }
  const { profile, out, only } = parsed;
  const results = await runBench({ profile, out, only });
  // A run of some sections only: a ratio of the sections not run is not a miss.
  const misses = missesOf(results.ratios).filter((m) => only === undefined || m.value !== null);
  process.stdout.write(`${formatTable(results)}\n\n`);
  process.stdout.write(
    out
      ? `wrote ${out} in ${results.duration_s} s\n`
      : `ran in ${results.duration_s} s (nothing written; --out PATH to keep it)\n`,
  );
  const narrow = narrowMarginsOf(results.ratios, results.ratio_spreads);
  if (narrow.length > 0) {
    process.stdout.write(
      `\n${narrow.length} gated ratio(s) whose rounds spread wider than their distance to the target (gated on the median):\n${formatNarrowMargins(narrow)}\n`,
    );
  }
  if (misses.length > 0) {
    process.stdout.write(`\n${misses.length} target(s) missed:\n${formatMisses(misses)}\n`);
    process.exitCode = 1;
  } else process.stdout.write('\nevery target met\n');
}

if (process.argv[1] === THIS_FILE) {
  main().catch((err) => {
    process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
    process.exit(1);
  });
}
