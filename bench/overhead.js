// agent-pep's own CPU per decision, with the network taken out (issue 30): `checkInput` and
// `authorizeAction` over an in-memory dispatcher that answers ALLOW in a microtask, against the floor's
// minimal handler (bench/lib.js floorDispatch: collect the body, JSON.parse it) over the same
// dispatcher. The difference is what agent-pep's pipeline costs a decision in JavaScript alone: the
// request id and text, the deadline, the in-flight registry, the answer's checks, rule 5 for an action.
// Then (issue 43) the two gated pairs against the floors that do the contract's work (bench/floors.js):
// `authorizeAction` with `permits` against the permit floor, and `authorizeActions` of 8 calls over
// AuthZEN against the batch floor (c16), in client CPU (user + system) per op, which a loaded machine
// moves far less than wall time.
//
//   npm run build && node bench/overhead.js [decisions per side, default 200000] [concurrency, default 64]
//
// Information, not a gated row: the bench's rows compare clients on the wire (bench/run.js).
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { actionHash, createPep } from 'agent-pep';
import { exportJWK, SignJWT } from 'jose';
import { NodeHttpDispatcher } from '../dist/transport/node-http.js';
import { batchFloor, permitFloor } from './floors.js';
import { floorDispatch } from './lib.js';

const N = Number(process.argv[2] ?? 200_000);
const CONCURRENCY = Number(process.argv[3] ?? 64);
const ROUNDS = 5;
const CONTENT = 'x'.repeat(220);
const TOOL = 'refund_payment';
const ARGS = { orderId: 'ord_1842', amount: 129.5, currency: 'EUR', reason: 'damaged on arrival' };
const ORIGIN = 'http://127.0.0.1:1';
const PATH = '/api/policy/authorize';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const sign = (tool) =>
  new SignJWT({ sid: 's', tool, act_hash: actionHash(tool, ARGS), decision_id: 'd1' })
    .setProtectedHeader({ alg: 'EdDSA', kid: 'k', typ: 'permit+jwt' })
    .setIssuer('https://i')
    .setAudience('svc')
    .setSubject('a')
    .setJti(randomUUID())
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(privateKey);
const permit = await sign(TOOL);
const CALLS = Array.from({ length: 8 }, (_, i) => ({ tool: `${TOOL}_${i}`, args: ARGS }));
/** The stub's `evaluations` answer for CALLS: every item ALLOW with its own permit. */
const batchAnswer = Buffer.from(
  JSON.stringify({
    evaluations: await Promise.all(
      CALLS.map(async (c) => ({ decision: true, context: { decisionId: 'd1', permitId: await sign(c.tool) } })),
    ),
  }),
);

const controller = { abort() {}, pause() {}, resume() {}, aborted: false, paused: false, reason: null };

/** The bench stub's answer (bench/stub.js), made in memory: ALLOW, the request id echoed, a permit on an action. */
function answer(options) {
  if (options.path.endsWith('/evaluations')) {
    const headers = { 'content-type': 'application/json', 'content-length': String(batchAnswer.length) };
    return { body: batchAnswer, headers };
  }
  const req = JSON.parse(options.body);
  const out = { verdict: 'ALLOW', requestId: req.requestId, stage: req.stage, decisionId: 'd1' };
  if (req.stage === 'action') out.permitId = permit;
  const body = Buffer.from(JSON.stringify(out));
  const headers = {
    'content-type': 'application/json',
    'content-length': String(body.length),
    'x-request-id': options.headers['x-request-id'],
  };
  return { body, headers };
}

// A dispatcher the client treats as its own (a string body, as to its own pool): the hook's class,
// its `dispatch` replaced by one that answers from memory with undici's handler API.
const dispatcher = Object.create(NodeHttpDispatcher.prototype);
Object.defineProperty(dispatcher, 'destroyed', { value: false });
dispatcher.destroy = async () => {};
// The mark of a dispatcher the client owns (src/transport/owned.ts), an instance field of the class.
dispatcher[Symbol.for('agent-pep.ownedDispatcher')] = true;
dispatcher.dispatch = (options, handler) => {
  const { body, headers } = answer(options);
  queueMicrotask(() => {
    handler.onRequestStart(controller, {});
    handler.onResponseStart(controller, 200, headers, 'OK');
    handler.onResponseData(controller, body);
    handler.onResponseEnd(controller, {});
  });
  return true;
};

const pep = createPep({ pdpUrl: ORIGIN, agentId: 'a', session: 's', dispatcher });
const sides = {
  checkInput: {
    floor: JSON.stringify({ agentId: 'a', session: 's', stage: 'input', requestId: randomUUID(), content: CONTENT }),
    call: () => pep.checkInput(CONTENT),
  },
  authorizeAction: {
    floor: JSON.stringify({
      agentId: 'a',
      session: 's',
      stage: 'action',
      requestId: randomUUID(),
      tool: TOOL,
      args: ARGS,
    }),
    call: () => pep.authorizeAction(TOOL, ARGS),
  },
};

/** Microseconds of wall time per call, `n` calls from `concurrency` workers (one CPU: it is CPU time). */
async function perCall(call, n) {
  let started = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (started++ < n) await call();
    }),
  );
  return ((performance.now() - t0) * 1000) / n;
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1];

/** Client CPU (user + system) µs per call, `n` calls from `concurrency` workers; every call must answer true. */
async function cpuPerCall(call, n, concurrency) {
  let started = 0;
  let bad = 0;
  const c0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started++ < n) if ((await call()) !== true) bad++;
    }),
  );
  const c = process.cpuUsage(c0);
  if (bad > 0) throw new Error(`${bad} invalid answers`);
  return (c.user + c.system) / n;
}

/** The two gated pairs of issue 43 in memory: each floor and agent-pep alternating, medians of ROUNDS. */
async function gatedPairs() {
  const keys = { keys: [{ ...(await exportJWK(publicKey)), kid: 'k', alg: 'EdDSA' }] };
  const base = { pdpUrl: ORIGIN, agentId: 'a', session: 's', dispatcher, permits: { keys, issuer: 'https://i' } };
  const single = createPep(base);
  const batch = createPep({ ...base, protocol: 'authzen' });
  const headers = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'agent-pep/x' };
  const common = { pool: dispatcher, origin: ORIGIN, headers, agentId: 'a', session: 's' };
  const allowed = (d) => d.verdict === 'ALLOW' && d.synthesized === undefined;
  const pairs = [
    {
      name: 'authorizeAction (permits) vs the permit floor',
      concurrency: CONCURRENCY,
      n: N,
      floor: permitFloor({ ...common, path: PATH, tool: TOOL, args: ARGS }),
      pep: async () => allowed(await single.authorizeAction(TOOL, ARGS)),
    },
    {
      name: 'authorizeActions (8 calls, authzen) vs the batch floor',
      concurrency: 16,
      n: Math.max(1, Math.round(N / 8)),
      floor: batchFloor({ ...common, path: '/access/v1/evaluations', calls: CALLS }),
      pep: async () => (await batch.authorizeActions(CALLS)).every(allowed),
    },
  ];
  try {
    for (const p of pairs) {
      const f = [];
      const o = [];
      for (let r = 0; r <= ROUNDS; r++) {
        const fr = await cpuPerCall(p.floor, p.n, p.concurrency);
        const or = await cpuPerCall(p.pep, p.n, p.concurrency);
        if (r === 0) continue;
        f.push(fr);
        o.push(or);
      }
      const mf = median(f);
      const mo = median(o);
      process.stdout.write(
        `${p.name} c${p.concurrency}: floor ${mf.toFixed(2)} µs, agent-pep ${mo.toFixed(2)} µs of CPU an op, ` +
          `floor / agent-pep ${(mf / mo).toFixed(3)} (medians of ${ROUNDS} rounds of ${p.n})\n`,
      );
    }
  } finally {
    await single.close();
    await batch.close();
  }
}

try {
  for (const [name, side] of Object.entries(sides)) {
    const decision = await side.call();
    if (decision.verdict !== 'ALLOW') throw new Error(`${name} answered ${decision.verdict}: ${decision.reason}`);
    const headers = { 'content-type': 'application/json', accept: 'application/json', 'x-request-id': 'r' };
    const floor = () => floorDispatch(dispatcher, ORIGIN, PATH, headers, side.floor);
    const f = [];
    const o = [];
    // One untimed round to warm both up, then ROUNDS rounds side by side.
    for (let r = 0; r <= ROUNDS; r++) {
      const fr = await perCall(floor, N);
      const or = await perCall(side.call, N);
      if (r === 0) continue;
      f.push(fr);
      o.push(or);
    }
    const mf = median(f);
    const mo = median(o);
    process.stdout.write(
      `${name} c${CONCURRENCY}: floor ${mf.toFixed(2)} µs, agent-pep ${mo.toFixed(2)} µs, ` +
        `agent-pep's own ${(mo - mf).toFixed(2)} µs a decision (medians of ${ROUNDS} rounds of ${N})\n`,
    );
  }
  await gatedPairs();
} finally {
  await pep.close();
}
