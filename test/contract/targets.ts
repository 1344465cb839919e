/**
 * Targets for the client contract suite: the dev PDP, and a scripted fake PDP that answers the same
 * small policy by hand (its own key, its own faults). Both speak CONTRACT.md section 3.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { exportJWK, generateKeyPair, type JSONWebKeySet, SignJWT } from 'jose';
import { type Fault, startDevPdp } from '../../src/dev-pdp/index.js';
import { actionHash, normalizeToolName } from '../../src/index.js';
import { REFUND_REVIEW } from '../support/policies.js';

/** The dev PDP's faults; the scripted fake implements the same ones. */
export type { Fault };

export interface Target {
  url: string;
  issuer: string;
  jwks: JSONWebKeySet;
  apiKey: string;
  setFault(f: Fault | null): void;
  close(): Promise<void>;
}

export const AGENT = 'support-ai';
export const API_KEY = 'contract-key';

/** The policy both targets enforce. */
export const POLICY = {
  agents: [AGENT],
  latches: [
    {
      id: 'prompt-injection',
      stage: ['input', 'context_egress'],
      content: 'ignore (?:all )?previous instructions',
      verdict: 'BLOCK',
      reason: 'looks like a prompt injection',
    },
    {
      id: 'phone-redaction',
      stage: ['output', 'delivery'],
      content: '\\b\\d{3}-\\d{3}-\\d{4}\\b',
      verdict: 'WARN',
      redact: '[phone]',
      reason: 'phone numbers are redacted',
    },
    { id: 'no-transfers', stage: 'action', tool: 'transfer_*', verdict: 'BLOCK', reason: 'no money transfers' },
    REFUND_REVIEW,
  ],
};

export async function devPdpTarget(): Promise<Target> {
  const pdp = await startDevPdp({ policy: POLICY, apiKey: API_KEY, log: false });
  return {
    url: pdp.url,
    issuer: pdp.issuer,
    jwks: pdp.jwks,
    apiKey: API_KEY,
    setFault: (f) => pdp.setFault(f),
    close: () => pdp.close(),
  };
}

/** The same policy, decided by hand. */
function decideByHand(body: Record<string, unknown>): Record<string, unknown> {
  const stage = body.stage as string;
  const content = typeof body.content === 'string' ? body.content : '';
  if ((stage === 'input' || stage === 'context_egress') && /ignore (?:all )?previous instructions/u.test(content)) {
    return { verdict: 'BLOCK', reason: 'looks like a prompt injection', latches: ['prompt-injection'] };
  }
  if ((stage === 'output' || stage === 'delivery') && /\b\d{3}-\d{3}-\d{4}\b/u.test(content)) {
    return {
      verdict: 'WARN',
      reason: 'phone numbers are redacted',
      latches: ['phone-redaction'],
      transformedContent: content.replace(/\b\d{3}-\d{3}-\d{4}\b/gu, '[phone]'),
    };
  }
  if (stage === 'action') {
    const tool = normalizeToolName(String(body.tool));
    if (tool.startsWith('transfer_'))
      return { verdict: 'BLOCK', reason: 'no money transfers', latches: ['no-transfers'] };
    const amount = (body.args as Record<string, unknown>).amount;
    if (tool === 'refund_payment' && typeof amount === 'number' && amount > 500) {
      return {
        verdict: 'ESCALATE',
        reason: 'refunds over 500 need review',
        latches: ['refund-review'],
        escalationId: 'esc_1',
      };
    }
  }
  return { verdict: 'ALLOW', latches: [] };
}

export async function scriptedFakeTarget(): Promise<Target> {
  const { publicKey, privateKey } = await generateKeyPair('EdDSA');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'fake-1', alg: 'EdDSA', use: 'sig' };
  const sockets = new Set<Socket>();
  let fault: Fault | null = null;
  let issuer = '';
  let n = 0;
  const send = (res: ServerResponse, status: number, body: unknown, requestId: string): void => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': requestId });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const requestId = String(req.headers['x-request-id'] ?? '');
      if (req.url === '/.well-known/jwks.json') return send(res, 200, { keys: [jwk] }, requestId);
      const f = fault;
      if (f?.kind === 'hang') return;
      if (f?.kind === 'reset') return req.socket.destroy();
      if (f?.kind === 'status') return send(res, f.status, { error: { code: 'fault' } }, requestId);
      if (f?.kind === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('\u0000{{not json');
      }
      if (req.headers.authorization !== `Bearer ${API_KEY}`)
        return send(res, 401, { error: { code: 'unauthorized' } }, requestId);
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        return send(res, 400, { error: { code: 'bad_request' } }, requestId);
      }
      if (body.agentId !== AGENT) return send(res, 404, { error: { code: 'unknown_agent' } }, requestId);
      const decision: Record<string, unknown> = {
        ...decideByHand(body),
        decisionId: `fake_${++n}`,
        requestId: body.requestId,
        stage: body.stage,
      };
      if (body.simulated === true) decision.simulated = true;
      else if (body.stage === 'action' && (decision.verdict === 'ALLOW' || decision.verdict === 'WARN')) {
        const tool = normalizeToolName(String(body.tool));
        const now = Math.floor(Date.now() / 1000);
        decision.permitId = await new SignJWT({
          sid: body.session,
          tool,
          act_hash: actionHash(tool, body.args as Record<string, unknown>),
          decision_id: decision.decisionId,
        })
          .setProtectedHeader({ alg: 'EdDSA', kid: 'fake-1', typ: 'permit+jwt' })
          .setIssuer(issuer)
          .setAudience('agent-pep')
          .setSubject(String(body.agentId))
          .setJti(`jti_${n}`)
          .setIssuedAt(now)
          .setExpirationTime(now + 60)
          .sign(privateKey);
      }
      if (f?.kind === 'slow') {
        const text = Buffer.from(JSON.stringify(decision));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) });
        let i = 0;
        const t = setInterval(
          () => {
            if (i >= text.length) {
              clearInterval(t);
              return res.end();
            }
            res.write(text.subarray(i, i + 1));
            i++;
          },
          1000 / (f.bytesPerSecond ?? 10),
        );
        res.on('close', () => clearInterval(t));
        return;
      }
      send(res, 200, decision, requestId);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: issuer,
    issuer,
    jwks: { keys: [jwk] },
    apiKey: API_KEY,
    setFault: (f) => {
      fault = f;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
