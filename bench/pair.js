// One gated pair of issue 43 side by side in one process, for profiling and for a quick reading on a
// loaded machine (the bench's own rows are bench/run.js's): the floor that does the contract's work
// (bench/floors.js) and agent-pep, alternating in time-boxed phases against the loopback stub, pinned
// as bench/run.js pins; prints each round's ratio, and the min, median and max.
//
//   npm run build && node bench/pair.js permit [rounds, default 8] [phase ms, default 1000]
//   node bench/pair.js batch 8 1000
//   node bench/pair.js text 8 1000
//
// permit: `authorizeAction` (with `permits`) against the permit floor at c64, decisions per second;
// batch: `authorizeActions` of 8 calls over AuthZEN against the batch floor at c16, calls per second;
// text: `checkInput` against run.js's floor (one prebuilt request, `dispatch`, the verdict read) at c64.

import { randomUUID } from 'node:crypto';
import { createPep } from 'agent-pep';
import { Pool } from 'undici';
import { batchFloor, permitFloor } from './floors.js';
import { createCell, FLOOR_POOL_OPTIONS, floorDispatch, pinClient, pinServer, runBatch } from './lib.js';
import { spawnStub } from './stub.js';

const [which = 'permit', roundsArg = '8', msArg = '1000'] = process.argv.slice(2);
if (which !== 'permit' && which !== 'batch' && which !== 'text') {
  process.stderr.write('usage: node bench/pair.js permit|batch|text [rounds] [phase ms]\n');
  process.exit(2);
}
const ROUNDS = Number(roundsArg);
const PHASE_MS = Number(msArg);
const TOOL = 'refund_payment';
const ARGS = Object.freeze({ orderId: 'ord_1842', amount: 129.5, currency: 'EUR', reason: 'damaged on arrival' });
const CALLS = Object.freeze(Array.from({ length: 8 }, (_, i) => Object.freeze({ tool: `${TOOL}_${i}`, args: ARGS })));
const CONTENT =
  'Hi, my order ord_1842 arrived damaged. The box was crushed and the ceramic mug inside is broken. ' +
  'Could you please refund it to my card, or send a replacement? I attached photos to my earlier email. Thanks, Ana';
const HEADERS = Object.freeze({
  'content-type': 'application/json',
  accept: 'application/json',
  'user-agent': 'agent-pep/bench',
});

const stub = await spawnStub();
pinClient();
pinServer(stub.pid);
const pool = new Pool(stub.url, FLOOR_POOL_OPTIONS);
const pep = createPep({
  pdpUrl: stub.url,
  agentId: 'a',
  session: 's',
  permits: { keys: stub.jwks, issuer: stub.issuer },
  ...(which === 'batch' ? { protocol: 'authzen' } : {}),
});
const common = { pool, origin: stub.url, headers: HEADERS, agentId: 'a', session: 's' };
const concurrency = which === 'batch' ? 16 : 64;
/** run.js's floor of `checkInput`: the request built once, one `dispatch`, the verdict read. */
function bareTextFloor() {
  const requestId = randomUUID();
  const body = JSON.stringify({ agentId: 'a', session: 's', stage: 'input', requestId, content: CONTENT });
  const headers = { ...HEADERS, 'x-request-id': requestId };
  return async () => {
    const r = await floorDispatch(pool, stub.url, '/api/policy/authorize', headers, body);
    return r.status === 200 && r.body.verdict === 'ALLOW';
  };
}
const textSides = () => [
  { name: 'floor', call: bareTextFloor() },
  {
    name: 'agent-pep',
    call: async () => {
      const d = await pep.checkInput(CONTENT);
      return d.verdict === 'ALLOW' && d.synthesized === undefined;
    },
  },
];
const sides =
  which === 'text'
    ? textSides()
    : which === 'permit'
      ? [
          { name: 'floor', call: permitFloor({ ...common, path: '/api/policy/authorize', tool: TOOL, args: ARGS }) },
          {
            name: 'agent-pep',
            call: async () => {
              const d = await pep.authorizeAction(TOOL, ARGS);
              return d.verdict === 'ALLOW' && d.synthesized === undefined && typeof d.permitId === 'string';
            },
          },
        ]
      : [
          { name: 'floor', call: batchFloor({ ...common, path: '/access/v1/evaluations', calls: CALLS }) },
          {
            name: 'agent-pep',
            call: async () =>
              (await pep.authorizeActions(CALLS)).every((d) => d.verdict === 'ALLOW' && d.synthesized === undefined),
          },
        ];
try {
  for (const s of sides) {
    if ((await s.call()) !== true) throw new Error(`${s.name}: not an ALLOW bound to its action`);
    await runBatch(s.call, concurrency, Math.min(PHASE_MS, 1000), null);
  }
  const cells = sides.map(() => createCell());
  // Client CPU (user + system, µs) per op of each phase: on a loaded machine the wall-time rates move
  // with the neighbours, the CPU each op takes far less.
  const cpu = sides.map(() => []);
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < sides.length; i++) {
      const k = (i + r) % sides.length;
      const ops0 = cells[k].ops;
      const c0 = process.cpuUsage();
      await runBatch(sides[k].call, concurrency, PHASE_MS, cells[k]);
      const c = process.cpuUsage(c0);
      cpu[k].push((c.user + c.system) / (cells[k].ops - ops0));
    }
  }
  if (cells.some((c) => c.errors > 0)) throw new Error(`invalid answers: ${cells.map((c) => c.errors).join(', ')}`);
  const per = cells[0].batches.map((b, i) => cells[1].batches[i].ops_per_s / b.ops_per_s);
  const sorted = [...per].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const f = (x) => x.toFixed(3);
  const cpuPer = cpu[0].map((fl, i) => fl / cpu[1][i]);
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  process.stdout.write(
    `${which} c${concurrency}: agent-pep / floor per round ${per.map(f).join(' ')}\n` +
      `  min ${f(sorted[0])}, median ${f(median)}, max ${f(sorted[sorted.length - 1])}` +
      ` (floor ${Math.round((cells[0].ops / cells[0].elapsedMs) * 1000)}, agent-pep ${Math.round((cells[1].ops / cells[1].elapsedMs) * 1000)} ops/s)\n` +
      `  client CPU per op: floor ${f(med(cpu[0]))} µs, agent-pep ${f(med(cpu[1]))} µs (medians); floor / agent-pep per round ${cpuPer.map(f).join(' ')}\n`,
  );
} finally {
  await pep.close();
  await pool.close();
  await stub.stop();
}
