// Loopback PDP stub for the benchmark: one node:http server (keep-alive) that answers fixed valid
// decisions in three protocols, plus a "hung" TCP server that accepts and never answers.
//
//   POST /api/policy/authorize   agent-pep (CONTRACT.md section 3): echoes requestId and stage; an action
//                                gets ALLOW with a real permit (Ed25519 JWS, section 4), signed once per
//                                (tool, args, agentId, session) and re-signed every 60 s
//   POST /v1/data/{path}         OPA data API: {"result":{...}}
//   POST /api/check/resources    Cerbos check-resources API (JSON)
//   POST /access/v1/evaluation   AuthZEN 1.0 (CONTRACT.md section 9): decision true, an action with a
//                                real permit in context.permitId (the agent-pep profile)
//   POST /access/v1/evaluations  AuthZEN 1.0 batch: every item answered the same way, in order
//   GET  /.well-known/jwks.json  the public key
//
// Run as a child (`fork('bench/stub.js')`, see spawnStub) so that the client under test and the server
// do not share one event loop; it reports { url, hungUrl, jwks, issuer } over IPC and exits when told
// to, or when its parent goes away.

import { fork } from 'node:child_process';
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import canonicalize from 'canonicalize';
import { exportJWK, SignJWT } from 'jose';

const HOST = '127.0.0.1';
const KID = 'bench-key-1';
const AUDIENCE = 'bench-service';
const PERMIT_TTL_SEC = 120;
const RESIGN_AFTER_MS = 60_000;

/** actionHash from agent-pep once it is built; until then the same formula (CONTRACT.md section 4). */
export async function loadActionHash() {
  try {
    const m = await import('agent-pep');
    if (typeof m.actionHash === 'function') {
      m.actionHash('probe', {});
      return m.actionHash;
    }
  } catch {
    // not built yet: fall back below
  }
  return (tool, args) => createHash('sha256').update(canonicalize({ tool, args }), 'utf8').digest('base64url');
}

function json(res, status, text) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Starts the stub servers in this process.
 * @returns {Promise<{ url: string, hungUrl: string, jwks: object, issuer: string, audience: string, close(): Promise<void> }>}
 */
export async function startStub() {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const jwk = { ...(await exportJWK(publicKey)), kid: KID, alg: 'EdDSA', use: 'sig' };
  const jwks = { keys: [jwk] };
  const jwksText = JSON.stringify(jwks);
  const actionHash = await loadActionHash();
  /** @type {Map<string, { at: number, permit: Promise<string> }>} */
  const permits = new Map();
  let issuer = '';

  function permitFor(tool, args, agentId, session) {
    const key = JSON.stringify([tool, args, agentId, session]);
    const hit = permits.get(key);
    const now = Date.now();
    if (hit && now - hit.at < RESIGN_AFTER_MS) return hit.permit;
    const iat = Math.floor(now / 1000);
    const permit = new SignJWT({ sid: session, tool, act_hash: actionHash(tool, args), decision_id: 'd1' })
      .setProtectedHeader({ alg: 'EdDSA', kid: KID, typ: 'permit+jwt' })
      .setIssuer(issuer)
      .setAudience(AUDIENCE)
      .setSubject(agentId)
      .setJti(randomUUID())
      .setIssuedAt(iat)
      .setExpirationTime(iat + PERMIT_TTL_SEC)
      .sign(privateKey);
    if (permits.size > 1000) permits.clear();
    permits.set(key, { at: now, permit });
    return permit;
  }

  async function agentPep(body, res) {
    const req = JSON.parse(body);
    const out = { verdict: 'ALLOW', requestId: req.requestId, stage: req.stage, decisionId: 'd1' };
    if (req.stage === 'action') out.permitId = await permitFor(req.tool, req.args, req.agentId, req.session);
    json(res, 200, JSON.stringify(out));
  }

  async function evaluationAnswer(e) {
    const context = { decisionId: 'd1' };
    if (e.action?.name === 'call') {
      context.permitId = await permitFor(
        e.resource.id,
        e.resource.properties?.args ?? {},
        e.subject.id,
        e.context.session,
      );
    }
    return { decision: true, context };
  }

  async function authzen(body, res) {
    json(res, 200, JSON.stringify(await evaluationAnswer(JSON.parse(body))));
  }

  async function authzenBatch(body, res) {
    const req = JSON.parse(body);
    const evaluations = await Promise.all(req.evaluations.map((e) => evaluationAnswer(e)));
    json(res, 200, JSON.stringify({ evaluations }));
  }

  function opa(body, res) {
    JSON.parse(body);
    json(res, 200, '{"result":{"allow":true,"reason":"no latch engaged","decision_id":"d1"},"decision_id":"d1"}');
  }

  function cerbos(body, res) {
    const req = JSON.parse(body);
    const r = req.resources[0].resource;
    const out = {
      requestId: req.requestId,
      results: [{ resource: { id: r.id, kind: r.kind }, actions: { [req.resources[0].actions[0]]: 'EFFECT_ALLOW' } }],
    };
    json(res, 200, JSON.stringify(out));
  }

  const server = http.createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = req.url ?? '';
      Promise.resolve()
        .then(() => {
          if (req.method === 'POST' && path === '/api/policy/authorize') return agentPep(body, res);
          if (req.method === 'POST' && path.startsWith('/v1/data/')) return opa(body, res);
          if (req.method === 'POST' && path === '/api/check/resources') return cerbos(body, res);
          if (req.method === 'POST' && path === '/access/v1/evaluation') return authzen(body, res);
          if (req.method === 'POST' && path === '/access/v1/evaluations') return authzenBatch(body, res);
          if (req.method === 'GET' && path === '/.well-known/jwks.json') return json(res, 200, jwksText);
          return json(res, 404, '{"error":"not found"}');
        })
        .catch(() => json(res, 400, '{"error":"bad request"}'));
    });
  });
  server.headersTimeout = 60_000;
  server.requestTimeout = 0;
  const sockets = new Set();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  // Accepts, reads and never answers.
  const hung = net.createServer((s) => {
    sockets.add(s);
    s.on('data', () => {});
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  });

  await new Promise((resolve) => server.listen(0, HOST, resolve));
  await new Promise((resolve) => hung.listen(0, HOST, resolve));
  const url = `http://${HOST}:${server.address().port}`;
  issuer = url;
  return {
    url,
    hungUrl: `http://${HOST}:${hung.address().port}`,
    jwks,
    issuer,
    audience: AUDIENCE,
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all([
        new Promise((resolve) => server.close(() => resolve())),
        new Promise((resolve) => hung.close(() => resolve())),
      ]);
    },
  };
}

/**
 * Forks this file as a child process and waits for its servers.
 * @returns {Promise<{ url: string, hungUrl: string, jwks: object, issuer: string, audience: string, pid: number, stop(): Promise<void> }>}
 */
export function spawnStub() {
  const child = fork(fileURLToPath(import.meta.url), ['--child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.send({ type: 'close' });
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('stub did not start within 10 s'));
    }, 10_000);
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`stub exited early (code ${code})`)));
    child.once('message', (m) => {
      clearTimeout(timer);
      resolve({ ...m, pid: child.pid, stop });
    });
  });
}

if (process.argv[2] === '--child' && process.send) {
  const stub = await startStub();
  const { close, ...info } = stub;
  process.send(info);
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await close().catch(() => {});
    process.exit(0);
  };
  process.on('message', (m) => {
    if (m && m.type === 'close') shutdown();
  });
  process.on('disconnect', shutdown);
}
