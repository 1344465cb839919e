// What the work the contract requires of every text decision costs against the bare floor of
// `checkInput_ops_c64_vs_floor` (issue 43, round 4's fourth session): the bare floor, then the same
// request with each required piece added by hand, then agent-pep's `checkInput`, alternating in
// time-boxed phases against the loopback stub at 64 in flight, pinned as bench/run.js pins. Prints the
// client CPU per decision of each (median over the rounds) and the floor's CPU over it (the ratio the
// gated row takes, in CPU terms: this client is the bottleneck at c64).
//
//   npm run build && node bench/text-work.js [rounds, default 8] [phase ms, default 800]
//
// The steps, each on top of the one before:
//   1. floor: one request built once (its id too), `dispatch`, `JSON.parse`, the verdict read (run.js's FLOOR);
//   2. + a fresh request: a request id and the request's text per decision (CONTRACT.md section 3: one
//      per decision), the headers a literal;
//   3. + deadline, cap, UTF-8, answer checks: bench/floors.js's text floor (a timer a request, the body's
//      cap, fatal UTF-8 decoding, a JSON content type, the verdict, the echoes, the fields of a text stage);
//   4. + I-JSON and the schema: agent-pep's own checks of the answer (`ijsonProblem`, the response
//      schema), which the contract requires too (section 3, rule 3);
//   5. agent-pep checkInput.
import { randomUUID } from 'node:crypto';
import { createPep } from 'agent-pep';
import { Pool } from 'undici';
import { checkAuthorizeResponse } from '../dist/wire/agent-pep.js';
import { ijsonProblem } from '../dist/wire/json.js';
import { dispatchJson, textFloor } from './floors.js';
import { FLOOR_POOL_OPTIONS, floorDispatch, pinClient, pinServer, printCpuSteps } from './lib.js';
import { spawnStub } from './stub.js';

const [roundsArg = '8', msArg = '800'] = process.argv.slice(2);
const ROUNDS = Number(roundsArg);
const PHASE_MS = Number(msArg);
const CONCURRENCY = 64;
const PATH = '/api/policy/authorize';
const CONTENT =
  'Hi, my order ord_1842 arrived damaged. The box was crushed and the ceramic mug inside is broken. ' +
  'Could you please refund it to my card, or send a replacement? I attached photos to my earlier email. Thanks, Ana';
const HEADERS = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json',
  'user-agent': 'agent-pep/bench',
});
const NOT_VERBATIM = /["\\\u0000-\u001f\ud800-\udfff]/;

const stub = await spawnStub();
pinClient();
pinServer(stub.pid);
const pool = new Pool(stub.url, FLOOR_POOL_OPTIONS);
const pep = createPep({ pdpUrl: stub.url, agentId: 'a', session: 's' });
const common = { pool, origin: stub.url, path: PATH, headers: HEADERS, agentId: 'a', session: 's', content: CONTENT };
const prefix = '{"agentId":"a","session":"s","stage":"input","requestId":"';
const withId = (requestId) => ({
  'content-type': HEADERS['content-type'],
  accept: HEADERS.accept,
  'user-agent': HEADERS['user-agent'],
  'x-request-id': requestId,
});

function bareFloor() {
  const requestId = randomUUID();
  const body = JSON.stringify({ agentId: 'a', session: 's', stage: 'input', requestId, content: CONTENT });
  const headers = withId(requestId);
  return async () => {
    const r = await floorDispatch(pool, stub.url, PATH, headers, body);
    return r.status === 200 && r.body.verdict === 'ALLOW';
  };
}

function freshRequest() {
  return async () => {
    const requestId = randomUUID();
    const text = NOT_VERBATIM.test(CONTENT) ? JSON.stringify(CONTENT) : `"${CONTENT}"`;
    const r = await floorDispatch(pool, stub.url, PATH, withId(requestId), `${prefix}${requestId}","content":${text}}`);
    return r.status === 200 && r.body.verdict === 'ALLOW';
  };
}

/** Step 3's text floor, and agent-pep's I-JSON and schema checks of the same answer. */
function withIJsonAndSchema() {
  return async () => {
    const requestId = randomUUID();
    const text = NOT_VERBATIM.test(CONTENT) ? JSON.stringify(CONTENT) : `"${CONTENT}"`;
    const r = await dispatchJson(pool, stub.url, PATH, withId(requestId), `${prefix}${requestId}","content":${text}}`);
    const d = r.body;
    return (
      r.status === 200 &&
      (r.type === 'application/json' || r.type?.startsWith('application/json;') === true) &&
      ijsonProblem(r.text, d) === undefined &&
      checkAuthorizeResponse(d) === undefined &&
      d.requestId === requestId &&
      d.stage === 'input' &&
      d.verdict === 'ALLOW' &&
      d.permitId === undefined &&
      d.transformedArgs === undefined &&
      d.route === undefined &&
      d.transformedContent === undefined
    );
  };
}

const steps = [
  { name: '1. floor (run.js FLOOR)', call: bareFloor() },
  { name: '2. + a fresh request', call: freshRequest() },
  { name: '3. + deadline, cap, UTF-8, answer checks', call: textFloor(common) },
  { name: '4. + I-JSON and the schema', call: withIJsonAndSchema() },
  {
    name: '5. agent-pep checkInput',
    call: async () => {
      const d = await pep.checkInput(CONTENT);
      return d.verdict === 'ALLOW' && d.synthesized === undefined;
    },
  },
];

try {
  await printCpuSteps(steps, 'decision', CONCURRENCY, ROUNDS, PHASE_MS);
} finally {
  await pep.close();
  await pool.close();
  await stub.stop();
}
