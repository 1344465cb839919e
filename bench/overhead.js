// agent-pep's own CPU per decision, with the network taken out (issue 30): `checkInput` and
// `authorizeAction` over an in-memory dispatcher that answers ALLOW in a microtask, against the floor's
// minimal handler (bench/lib.js floorDispatch: collect the body, JSON.parse it) over the same
// dispatcher. The difference is what agent-pep's pipeline costs a decision in JavaScript alone: the
// request id and text, the deadline, the in-flight registry, the answer's checks, rule 5 for an action.
//
//   npm run build && node bench/overhead.js [decisions per side, default 200000] [concurrency, default 64]
//
// Information, not a gated row: the bench's rows compare clients on the wire (bench/run.js).
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { actionHash, createPep } from 'agent-pep';
import { SignJWT } from 'jose';
import { NodeHttpDispatcher } from '../dist/transport/node-http.js';
import { floorDispatch } from './lib.js';

const N = Number(process.argv[2] ?? 200_000);
const CONCURRENCY = Number(process.argv[3] ?? 64);
const ROUNDS = 5;
const CONTENT = 'x'.repeat(220);
const TOOL = 'refund_payment';
const ARGS = { orderId: 'ord_1842', amount: 129.5, currency: 'EUR', reason: 'damaged on arrival' };
const ORIGIN = 'http://127.0.0.1:1';
const PATH = '/api/policy/authorize';

const { privateKey } = generateKeyPairSync('ed25519');
const permit = await new SignJWT({ sid: 's', tool: TOOL, act_hash: actionHash(TOOL, ARGS) })
  .setProtectedHeader({ alg: 'EdDSA', kid: 'k', typ: 'permit+jwt' })
  .setIssuer('https://i')
  .setAudience('svc')
  .setSubject('a')
  .setJti(randomUUID())
  .setIssuedAt()
  .setExpirationTime('5m')
  .sign(privateKey);

const controller = { abort() {}, pause() {}, resume() {}, aborted: false, paused: false, reason: null };

/** The bench stub's answer (bench/stub.js), made in memory: ALLOW, the request id echoed, a permit on an action. */
function answer(options) {
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
} finally {
  await pep.close();
}
