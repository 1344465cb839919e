/** The notifyUrl webhook: its payload, that it never delays the decision, and failures logged without content. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createPep } from '../../../../../src/index.js';
import { REFUND_REVIEW } from '../../../../../test/support/policies.js';
import { type RefusedRequest, startDevPdp } from '../../../src/index.js';

const POLICY = { agents: ['support-ai'], latches: [REFUND_REVIEW] };
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function hook(handler: (req: IncomingMessage, body: string, res: import('node:http').ServerResponse) => void) {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => handler(req, body, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

async function pdpWith(notifyUrl: string, log: RefusedRequest[] = []) {
  const pdp = await startDevPdp({ policy: POLICY, reviewerApiKey: 'rk', notifyUrl, log: (r) => log.push(r) });
  const pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's-9' });
  closers.push(
    () => pdp.close(),
    () => pep.close(),
  );
  return { pdp, pep };
}

describe('notifyUrl', () => {
  it('POSTs { escalationId, agentId, session, tool, reason, consoleUrl } when an escalation opens', async () => {
    const got: Array<{ type: string | undefined; body: unknown }> = [];
    const url = await hook((req, body, res) => {
      got.push({ type: req.headers['content-type'], body: JSON.parse(body) });
      res.end();
    });
    const { pdp, pep } = await pdpWith(url);
    await pep.authorizeAction('refund_payment', { amount: 100 }); // ALLOW: no notification
    const held = await pep.authorizeAction('refund_payment', { amount: 900, card: '4111111111111111' });
    await expect.poll(() => got.length).toBe(1);
    expect(got[0]).toEqual({
      type: 'application/json',
      body: {
        escalationId: held.escalationId,
        agentId: 'support-ai',
        session: 's-9',
        tool: 'refund_payment',
        reason: 'refunds over 500 need review',
        consoleUrl: `${pdp.url}/console#${held.escalationId}`,
      },
    });
    expect(JSON.stringify(got)).not.toContain('4111');
  });

  it('a webhook that never answers delays no decision; the timeout is logged with its code only', async () => {
    const log: RefusedRequest[] = [];
    const url = await hook(() => {}); // never answers
    const { pep } = await pdpWith(url, log);
    const started = Date.now();
    const held = await pep.authorizeAction('refund_payment', { amount: 900 });
    expect(held.verdict).toBe('ESCALATE');
    expect(Date.now() - started).toBeLessThan(2000);
    await expect.poll(() => log.map((r) => r.code), { timeout: 8000 }).toContain('notify_timeout');
    expect(log.find((r) => r.code === 'notify_timeout')).toEqual({
      status: 0,
      code: 'notify_timeout',
      method: 'POST',
      route: '(notify)',
    });
  });

  it('a webhook answering 500, or not listening, is logged (status and code), and the escalation stands', async () => {
    const log: RefusedRequest[] = [];
    const url = await hook((_req, _body, res) => {
      res.statusCode = 500;
      res.end('secret detail');
    });
    const { pep } = await pdpWith(url, log);
    expect((await pep.authorizeAction('refund_payment', { amount: 900 })).verdict).toBe('ESCALATE');
    await expect.poll(() => log.find((r) => r.code === 'notify_failed')?.status).toBe(500);
    const log2: RefusedRequest[] = [];
    const { pep: pep2 } = await pdpWith('http://127.0.0.1:9/hook', log2);
    expect((await pep2.authorizeAction('refund_payment', { amount: 901 })).verdict).toBe('ESCALATE');
    await expect.poll(() => log2.map((r) => r.code)).toContain('notify_unreachable');
    expect(JSON.stringify([...log, ...log2])).not.toMatch(/secret|refund|901/);
  });

  it('refuses a notifyUrl that is not http(s), naming it', async () => {
    await expect(startDevPdp({ policy: POLICY, notifyUrl: 'file:///etc/passwd' })).rejects.toMatchObject({
      name: 'TypeError',
      option: 'notifyUrl',
    });
  });
});
