// Drives one client against the stub for a few seconds so it can be profiled:
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof bench/profile.js checkInput 64 5
//   node bench/cpuprofile-summary.js /tmp/prof/*.cpuprofile
//
// clients: undici, floor (the true floor: bench/lib.js floorDispatch on a Pool with the transport's
// options), floorAction (the same, posting an action), floorPermit (the floor that also checks the
// answer and does rule 5, bench/floors.js), floorBatch (its 8-item AuthZEN batch; ops are calls), checkInput, authorizeAction, jose, verify,
// authorizeActions (8 calls over AuthZEN; ops are calls), singles8 (8 authorizeAction over AuthZEN at
// once; ops are calls)
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createMemoryReplayStore, createPep, createPermitVerifier } from 'agent-pep';
import { jwtVerify, SignJWT } from 'jose';
import { Pool, request } from 'undici';
import { batchFloor, permitFloor } from './floors.js';
import { FLOOR_POOL_OPTIONS, floorDispatch, pinClient, pinServer } from './lib.js';
import { loadActionHash, spawnStub } from './stub.js';

const [which = 'checkInput', conc = '64', secs = '5'] = process.argv.slice(2);
const concurrency = Number(conc);
const durationMs = Number(secs) * 1000;
const CONTENT = 'x'.repeat(220);
const ARGS = { orderId: 'ord_1842', amount: 129.5, currency: 'EUR', reason: 'damaged on arrival' };

async function permits(n) {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const actionHash = await loadActionHash();
  const iat = Math.floor(Date.now() / 1000);
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push(
      await new SignJWT({ sid: 's', tool: 'refund_payment', act_hash: actionHash('refund_payment', ARGS) })
        .setProtectedHeader({ alg: 'EdDSA', kid: 'k', typ: 'permit+jwt' })
        .setIssuer('https://i')
        .setAudience('svc')
        .setSubject('a')
        .setJti(randomUUID())
        .setIssuedAt(iat)
        .setExpirationTime(iat + 300)
        .sign(privateKey),
    );
  }
  return { out, publicKey };
}

const stub = await spawnStub();
// As in run.js: this process on CPU 0, the stub on the others (lib.js PIN).
pinClient();
pinServer(stub.pid);
let call;
let close = async () => {};
let weight = 1;
try {
  if (which === 'floor' || which === 'floorAction') {
    const pool = new Pool(stub.url, FLOOR_POOL_OPTIONS);
    const requestId = randomUUID();
    const body = JSON.stringify(
      which === 'floor'
        ? { agentId: 'a', session: 's', stage: 'input', requestId, content: CONTENT }
        : { agentId: 'a', session: 's', stage: 'action', requestId, tool: 'refund_payment', args: ARGS },
    );
    const headers = { 'content-type': 'application/json', accept: 'application/json', 'x-request-id': requestId };
    call = () => floorDispatch(pool, stub.url, '/api/policy/authorize', headers, body);
    close = () => pool.close();
  } else if (which === 'floorPermit' || which === 'floorBatch') {
    const pool = new Pool(stub.url, FLOOR_POOL_OPTIONS);
    const headers = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'agent-pep/0' };
    const common = { pool, origin: stub.url, headers, agentId: 'a', session: 's' };
    const calls = Array.from({ length: 8 }, (_, i) => ({ tool: `refund_payment_${i}`, args: ARGS }));
    call =
      which === 'floorPermit'
        ? permitFloor({ ...common, path: '/api/policy/authorize', tool: 'refund_payment', args: ARGS })
        : batchFloor({ ...common, path: '/access/v1/evaluations', calls });
    if (which === 'floorBatch') weight = 8;
    close = () => pool.close();
  } else if (which === 'undici') {
    const pool = new Pool(stub.url);
    const body = JSON.stringify({
      agentId: 'a',
      session: 's',
      stage: 'input',
      requestId: randomUUID(),
      content: CONTENT,
    });
    const headers = { 'content-type': 'application/json', accept: 'application/json', 'x-request-id': randomUUID() };
    call = async () =>
      (
        await request(`${stub.url}/api/policy/authorize`, { method: 'POST', headers, body, dispatcher: pool })
      ).body.json();
    close = () => pool.close();
  } else if (which === 'checkInput' || which === 'authorizeAction') {
    const pep = createPep({
      pdpUrl: stub.url,
      agentId: 'a',
      session: 's',
      permits: { keys: stub.jwks, issuer: stub.issuer },
    });
    call = which === 'checkInput' ? () => pep.checkInput(CONTENT) : () => pep.authorizeAction('refund_payment', ARGS);
    close = () => pep.close();
  } else if (which === 'authorizeActions' || which === 'singles8') {
    const pep = createPep({
      pdpUrl: stub.url,
      agentId: 'a',
      session: 's',
      protocol: 'authzen',
      permits: { keys: stub.jwks, issuer: stub.issuer },
    });
    const calls = Array.from({ length: 8 }, (_, i) => ({ tool: `refund_payment_${i}`, args: ARGS }));
    call =
      which === 'authorizeActions'
        ? () => pep.authorizeActions(calls)
        : () => Promise.all(calls.map((c) => pep.authorizeAction(c.tool, c.args)));
    weight = 8;
    close = () => pep.close();
  } else {
    const { out, publicKey } = await permits(30_000);
    let i = 0;
    if (which === 'jose') {
      call = () =>
        jwtVerify(out[i++ % out.length], publicKey, { issuer: 'https://i', audience: 'svc', typ: 'permit+jwt' });
    } else {
      const v = createPermitVerifier({
        keys: publicKey,
        issuer: 'https://i',
        audience: 'svc',
        replayStore: createMemoryReplayStore({ maxEntries: 100_000 }),
      });
      call = () => v.verify(out[i++ % out.length], { tool: 'refund_payment', args: ARGS });
    }
  }
  const t0 = performance.now();
  const end = t0 + durationMs;
  let ops = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end && ops < 100_000) {
        await call();
        ops += weight;
      }
    }),
  );
  process.stdout.write(
    `${which} c${concurrency}: ${Math.round((ops / (performance.now() - t0)) * 1000)} ops/s (${ops} ops)\n`,
  );
} finally {
  await close();
  await stub.stop();
}
