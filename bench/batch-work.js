// What separates agent-pep's 8-call `authorizeActions` from the batch floor of
// `authorizeActions_8_vs_floor_batch_c16` (issue 43, round 4's fourth session): the floor, the floor
// with the per-item work it leaves out done by agent-pep's own functions, and agent-pep, alternating in
// time-boxed phases against the loopback stub at 16 in flight, pinned as bench/run.js pins. Prints the
// client CPU per batch of each (median over the rounds) and the floor's CPU over it.
//
//   npm run build && node bench/batch-work.js [rounds, default 8] [phase ms, default 800]
//
// The steps:
//   1. floor: bench/floors.js's batch floor (the same evaluations request, the answer's checks, rule 5);
//   2. + what the floor leaves out, by agent-pep's functions: each call's tool name normalized and args
//      snapshotted (and written as RFC 8785 from the snapshot), the answer's I-JSON, each item mapped
//      and checked (`mapAnswer`) and made a decision by the enforceability rules (`toDecision`, rule 5
//      in place of the floor's own);
//   3. agent-pep authorizeActions: step 2 plus agent-pep's own layering (the steps, the exchange and
//      its in-flight registry, the session count, the outcomes).
import { randomUUID } from 'node:crypto';
import { createPep } from 'agent-pep';
import { Pool } from 'undici';
import { toDecision } from '../dist/core/enforceable.js';
import { snapshotJsonObject } from '../dist/internal/json.js';
import { normalizeToolName } from '../dist/internal/tool-name.js';
import { canonicalSnapshotJson } from '../dist/permit/hash.js';
import { mapAnswer } from '../dist/wire/authzen.js';
import { ijsonProblem } from '../dist/wire/json.js';
import { batchFloor, dispatchJson } from './floors.js';
import { FLOOR_POOL_OPTIONS, pinClient, pinServer, printCpuSteps } from './lib.js';
import { spawnStub } from './stub.js';

const [roundsArg = '8', msArg = '800'] = process.argv.slice(2);
const ROUNDS = Number(roundsArg);
const PHASE_MS = Number(msArg);
const CONCURRENCY = 16;
const PATH = '/access/v1/evaluations';
const ARGS = Object.freeze({ orderId: 'ord_1842', amount: 129.5, currency: 'EUR', reason: 'damaged on arrival' });
const CALLS = Object.freeze(
  Array.from({ length: 8 }, (_, i) => Object.freeze({ tool: `refund_payment_${i}`, args: ARGS })),
);
const HEADERS = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json',
  'user-agent': 'agent-pep/bench',
});
const ENFORCE = Object.freeze({ checkPermitBinding: true, requireEcho: false });

const stub = await spawnStub();
pinClient();
pinServer(stub.pid);
const pool = new Pool(stub.url, FLOOR_POOL_OPTIONS);
const pep = createPep({
  pdpUrl: stub.url,
  agentId: 'a',
  session: 's',
  protocol: 'authzen',
  permits: { keys: stub.jwks, issuer: stub.issuer },
});

/** Step 2: the floor with the per-item work it leaves out done by agent-pep's own functions. */
function withItemWork() {
  const subject = '{"subject":{"type":"agent","id":"a"},"action":{"name":"call"},"resource":{"type":"tool","id":';
  return async () => {
    const n = CALLS.length;
    const sent = new Array(n);
    let body = '{"options":{"evaluations_semantic":"execute_all"},"evaluations":[';
    for (let i = 0; i < n; i++) {
      const tool = normalizeToolName(CALLS[i].tool);
      const args = snapshotJsonObject(CALLS[i].args);
      const argsJson = canonicalSnapshotJson(args);
      const requestId = randomUUID();
      sent[i] = { stage: 'action', requestId, agentId: 'a', session: 's', simulated: false, tool, args, argsJson };
      body += `${i === 0 ? '' : ','}${subject}${JSON.stringify(tool)},"properties":{"args":${argsJson}}},"context":{"session":"s","requestId":"${requestId}"}}`;
    }
    body += ']}';
    const headers = {
      'content-type': HEADERS['content-type'],
      accept: HEADERS.accept,
      'user-agent': HEADERS['user-agent'],
      'x-request-id': randomUUID(),
    };
    const r = await dispatchJson(pool, stub.url, PATH, headers, body);
    const items = r.body?.evaluations;
    if (r.status !== 200 || !Array.isArray(items) || items.length !== n) return false;
    if (ijsonProblem(r.text, r.body) !== undefined) return false;
    for (let i = 0; i < n; i++) {
      const a = mapAnswer(items[i], `evaluations.${i}.`);
      if (toDecision(a.response, a.raw, sent[i], undefined, ENFORCE).verdict !== 'ALLOW') return false;
    }
    return true;
  };
}

const steps = [
  {
    name: '1. floor (bench/floors.js batch)',
    call: batchFloor({
      pool,
      origin: stub.url,
      path: PATH,
      headers: HEADERS,
      agentId: 'a',
      session: 's',
      calls: CALLS,
    }),
  },
  { name: '2. + the per-item work it leaves out', call: withItemWork() },
  {
    name: '3. agent-pep authorizeActions',
    call: async () =>
      (await pep.authorizeActions(CALLS)).every((d) => d.verdict === 'ALLOW' && d.synthesized === undefined),
  },
];

try {
  await printCpuSteps(steps, '8-call batch', CONCURRENCY, ROUNDS, PHASE_MS);
} finally {
  await pep.close();
  await pool.close();
  await stub.stop();
}
