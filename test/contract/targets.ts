/**
 * Targets for the client contract suite: the dev PDP, a scripted fake PDP that answers the same
 * small policy by hand (its own key, its own faults), both speaking CONTRACT.md section 3 and AuthZEN
 * 1.0 (section 9), and a real Cerbos PDP (AuthZEN only) with the same policy as Cerbos policies
 * (test/fixtures/cerbos/contract/). A target says what it can do; the suite asks only that.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { exportJWK, generateKeyPair, type JSONWebKeySet, SignJWT } from 'jose';
import { type Fault, startDevPdp } from '../../packages/dev-pdp/src/index.js';
import { actionHash, normalizeToolName } from '../../src/index.js';
import { cerbosPolicies, startCerbos } from '../support/cerbos.js';
import { REFUND_REVIEW } from '../support/policies.js';

/** The dev PDP's faults; the scripted fake implements the same ones. */
export type { Fault };

/** What a target can do beyond ALLOW and a plain deny. */
export interface Capabilities {
  /** Mints permits (`jwks`, `issuer`); without, the client runs with `permits: false`. */
  permits: boolean;
  /** Answers WARN with transformed content. */
  warn: boolean;
  /** Answers ESCALATE (else a held call is a plain deny). */
  escalate: boolean;
  /** Refuses a wrong API key (401) and an unknown agent (404); else an unknown agent is a deny. */
  statuses: boolean;
  /** Names the latches that engaged and a decision id. */
  latches: boolean;
  /** `setFault` works. */
  faults: boolean;
}

export interface Target {
  url: string;
  issuer: string;
  jwks: JSONWebKeySet;
  apiKey: string | undefined;
  can: Capabilities;
  setFault(f: Fault | null): void;
  /** Stops the PDP (for a target that can be stopped mid-run); `close` still works after. */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/** What the dev PDP and the scripted fake can do: everything. */
export const FULL: Capabilities = Object.freeze({
  permits: true,
  warn: true,
  escalate: true,
  statuses: true,
  latches: true,
  faults: true,
});

/** What Cerbos can do through AuthZEN: ALLOW and deny (no permits, WARN, ESCALATE, API key or faults). */
export const CERBOS_CAN: Capabilities = Object.freeze({
  permits: false,
  warn: false,
  escalate: false,
  statuses: false,
  latches: false,
  faults: false,
});

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
    can: FULL,
    setFault: (f) => pdp.setFault(f),
    stop: () => pdp.close(),
    close: () => pdp.close(),
  };
}

/** A real Cerbos PDP over AuthZEN, with the contract policy in test/fixtures/cerbos/contract/. */
export async function cerbosTarget(): Promise<Target> {
  const cerbos = await startCerbos(cerbosPolicies('contract'));
  return {
    url: cerbos.url,
    issuer: cerbos.url,
    jwks: { keys: [] },
    apiKey: undefined,
    can: CERBOS_CAN,
    setFault: (f) => {
      if (f !== null) throw new Error('Cerbos takes no faults');
    },
    stop: () => cerbos.stop(),
    close: () => cerbos.stop(),
  };
}

/** An AuthZEN evaluation (CONTRACT.md section 9) back to the agent-pep request it maps. */
function fromEvaluation(e: Record<string, unknown>): Record<string, unknown> {
  const subject = (e.subject ?? {}) as Record<string, unknown>;
  const action = (e.action ?? {}) as Record<string, unknown>;
  const resource = (e.resource ?? {}) as Record<string, unknown>;
  const properties = (resource.properties ?? {}) as Record<string, unknown>;
  const context = (e.context ?? {}) as Record<string, unknown>;
  const stage = action.name === 'call' ? 'action' : action.name;
  return {
    agentId: subject.id,
    session: context.session,
    requestId: context.requestId,
    simulated: context.simulated,
    stage,
    ...(stage === 'action' ? { tool: resource.id, args: properties.args } : { content: properties.content }),
  };
}

/** An agent-pep decision as an AuthZEN answer with the agent-pep profile in `context`. */
function toEvaluationAnswer(d: Record<string, unknown>): Record<string, unknown> {
  const { verdict, reason, requestId: _r, stage: _s, simulated: _m, ...rest } = d;
  const context: Record<string, unknown> = { verdict, ...rest };
  if (reason !== undefined) context.reason_admin = reason;
  return { decision: verdict === 'ALLOW' || verdict === 'WARN', context };
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
      if (req.url === '/.well-known/authzen-configuration') {
        return send(
          res,
          200,
          {
            policy_decision_point: issuer,
            access_evaluation_endpoint: `${issuer}/access/v1/evaluation`,
            access_evaluations_endpoint: `${issuer}/access/v1/evaluations`,
          },
          requestId,
        );
      }
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
      let reply: unknown;
      if (req.url === '/access/v1/evaluation') {
        const one = await decideOne(fromEvaluation(body));
        if ('status' in one) return send(res, one.status as number, { error: { code: one.code } }, requestId);
        reply = toEvaluationAnswer(one);
      } else if (req.url === '/access/v1/evaluations') {
        const items = Array.isArray(body.evaluations) ? (body.evaluations as Record<string, unknown>[]) : [];
        const answers = [];
        for (const item of items) {
          const one = await decideOne(fromEvaluation(item));
          if ('status' in one) return send(res, one.status as number, { error: { code: one.code } }, requestId);
          answers.push(toEvaluationAnswer(one));
        }
        reply = { evaluations: answers };
      } else {
        const one = await decideOne(body);
        if ('status' in one) return send(res, one.status as number, { error: { code: one.code } }, requestId);
        reply = one;
      }
      if (f?.kind === 'slow') {
        const text = Buffer.from(JSON.stringify(reply));
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
      send(res, 200, reply, requestId);
    });
  });
  /** One agent-pep request decided: the decision body, or a refusal. */
  async function decideOne(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (body.agentId !== AGENT) return { status: 404, code: 'unknown_agent' };
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
    return decision;
  }
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
    can: FULL,
    setFault: (f) => {
      fault = f;
    },
    stop: async () => {},
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
