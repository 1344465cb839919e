/**
 * The limits of contract section 19 and the review rules of issue 41, on a running dev PDP: refused
 * with a clear 400 and never stored (a session id over 256 characters, more than
 * `maxEscalationsPerSession` open); a simulated ESCALATE opens no escalation; the identical pending
 * request joins its open escalation; an approval used once by concurrent requests with no session; the
 * reviewer key throttled at every endpoint that accepts it; `/healthz` and `/readyz` without the API
 * key; a drain answers what is in flight and takes no new decision; the status endpoint says only
 * `{ status }`; an approval lifts only the ESCALATE it resolved (a redaction stands).
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import { postJson } from '../../../../test/support/dev-pdp-http.js';
import { sessionHarness } from '../../../../test/support/sessions.js';

const POLICY = {
  agents: ['agent'],
  latches: [
    {
      id: 'refund-review',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { gt: 100 } },
      verdict: 'ESCALATE',
    },
    { id: 'wire-review', stage: 'delivery', content: '(?i)wire transfer', verdict: 'ESCALATE' },
    { id: 'ssn', stage: 'delivery', content: '\\b\\d{3}-\\d{2}-\\d{4}\\b', verdict: 'WARN', redact: '[ssn]' },
  ],
};
const AGENT = { authorization: 'Bearer agent-key' };
const REVIEWER = { authorization: 'Bearer reviewer-key' };

const harness = sessionHarness(POLICY);
afterEach(() => harness.closeAll());
const start = (extra: Record<string, unknown> = {}) =>
  harness.start({ apiKey: 'agent-key', reviewerApiKey: 'reviewer-key', ...extra });
type Pdp = Awaited<ReturnType<typeof start>>;

function authorize(pdp: Pdp, body: Record<string, unknown>) {
  return postJson(
    pdp.url,
    '/api/policy/authorize',
    { agentId: 'agent', session: 's1', requestId: `r-${randomUUID()}`, stage: 'action', ...body },
    { headers: AGENT },
  );
}
const refund = (pdp: Pdp, amount: number, extra: Record<string, unknown> = {}) =>
  authorize(pdp, { tool: 'refund_payment', args: { amount }, ...extra });
const pending = async (pdp: Pdp) =>
  (
    (await fetch(`${pdp.url}/api/escalations`, { headers: REVIEWER }).then((r) => r.json())) as {
      escalations: unknown[];
    }
  ).escalations;

describe('limits refused with a 400, never stored', () => {
  test('a session id over 256 characters is a 400 session_too_long; 256 is decided', async () => {
    const pdp = await start();
    const long = await refund(pdp, 1, { session: 'x'.repeat(257) });
    expect([long.status, long.body.code]).toEqual([400, 'session_too_long']);
    expect((await refund(pdp, 1, { session: 'x'.repeat(256) })).body.verdict).toBe('ALLOW');
    expect(pdp.evidence()).toHaveLength(1);
  });

  test('more than maxEscalationsPerSession open is a 400 too_many_escalations, and nothing is recorded', async () => {
    const pdp = await start({ maxEscalationsPerSession: 2 });
    expect((await refund(pdp, 101)).body.verdict).toBe('ESCALATE');
    expect((await refund(pdp, 102)).body.verdict).toBe('ESCALATE');
    const third = await refund(pdp, 103);
    expect([third.status, third.body.code]).toEqual([400, 'too_many_escalations']);
    expect(await pending(pdp)).toHaveLength(2);
    expect(pdp.evidence()).toHaveLength(2);
    expect((await refund(pdp, 103, { session: 's2' })).body.verdict).toBe('ESCALATE');
  });
});

describe('one escalation per pending request', () => {
  test('a simulated ESCALATE opens no escalation', async () => {
    const pdp = await start();
    const simulated = await refund(pdp, 500, { simulated: true });
    expect(simulated.body.verdict).toBe('ESCALATE');
    expect(simulated.body.escalationId).toBeUndefined();
    expect(await pending(pdp)).toEqual([]);
  });

  test('the identical pending request (agent, session, tool, act_hash) reuses the open escalation', async () => {
    const pdp = await start();
    const first = await refund(pdp, 500);
    const second = await refund(pdp, 500);
    expect(second.body.escalationId).toBe(first.body.escalationId);
    expect((await refund(pdp, 501)).body.escalationId).not.toBe(first.body.escalationId);
    expect(await pending(pdp)).toHaveLength(2);
    // the decision's record names its escalation: the id the approval endpoint takes
    expect(pdp.evidence()[0]).toMatchObject({ verdict: 'ESCALATE', escalationId: first.body.escalationId });
  });

  test('an approval is used once by concurrent AuthZEN requests that name no session', async () => {
    const pdp = await start();
    const evaluation = () =>
      postJson(
        pdp.url,
        '/access/v1/evaluation',
        {
          subject: { type: 'agent', id: 'agent' },
          action: { name: 'call' },
          resource: { type: 'tool', id: 'refund_payment', properties: { args: { amount: 900 } } },
          context: { requestId: `az-${randomUUID()}` },
        },
        { headers: AGENT },
      );
    const held = await evaluation();
    await pdp.resolveEscalation((held.body.context as { escalationId: string }).escalationId, 'approve');
    const replies = await Promise.all(Array.from({ length: 8 }, evaluation));
    expect(replies.filter((r) => r.body.decision === true)).toHaveLength(1);
  });
});

describe('the reviewer key is throttled wherever it is accepted', () => {
  test('wrong keys at POST /api/escalations/{id} lock the client out there, at GET /api/escalations and at the console sign-in', async () => {
    const pdp = await start();
    const id = (await refund(pdp, 500)).body.escalationId as string;
    for (let i = 0; i < 10; i++) {
      const guess = await postJson(
        pdp.url,
        `/api/escalations/${id}`,
        { resolution: 'approve' },
        {
          headers: { authorization: `Bearer guess-${i}` },
        },
      );
      expect(guess.status).toBe(401);
    }
    const right = await postJson(pdp.url, `/api/escalations/${id}`, { resolution: 'approve' }, { headers: REVIEWER });
    expect([right.status, right.body.code]).toEqual([429, 'too_many_requests']);
    expect(right.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await fetch(`${pdp.url}/api/escalations`, { headers: REVIEWER })).status).toBe(429);
    // the console's sign-in counts the same failures
    const page = await fetch(`${pdp.url}/console`);
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1] as string;
    const signIn = await fetch(`${pdp.url}/console/sign-in`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', origin: pdp.url },
      body: new URLSearchParams({ csrf, key: 'reviewer-key' }).toString(),
      redirect: 'manual',
    });
    expect(signIn.status).toBe(429);
    expect(await pdp.resolveEscalation(id, 'deny')).toBeUndefined(); // still open: nothing was approved
  });
});

describe('escalation status for the agent', () => {
  test('GET /api/escalations/{id} with the API key says only { status }; 404 unknown, 401 without a key', async () => {
    const pdp = await start();
    const id = (await refund(pdp, 500)).body.escalationId as string;
    const read = async (headers: Record<string, string>, which = id) => {
      const res = await fetch(`${pdp.url}/api/escalations/${which}`, { headers });
      return { status: res.status, body: await res.json() };
    };
    expect(await read(AGENT)).toEqual({ status: 200, body: { status: 'pending' } });
    await pdp.resolveEscalation(id, 'deny');
    expect(await read(AGENT)).toEqual({ status: 200, body: { status: 'denied' } });
    expect((await read(AGENT, 'esc_unknown')).status).toBe(404);
    expect((await read({})).status).toBe(401);
  });
});

describe('an approval lifts only the ESCALATE it resolved', () => {
  test('an approved delivery keeps the redaction of the other latch (WARN, the SSN redacted)', async () => {
    const pdp = await start();
    const text = 'wire transfer done for 123-45-6789';
    const deliver = () => authorize(pdp, { stage: 'delivery', content: text });
    const held = await deliver();
    expect(held.body.verdict).toBe('ESCALATE');
    await pdp.resolveEscalation(held.body.escalationId as string, 'approve');
    const approved = await deliver();
    expect(approved.body).toMatchObject({ verdict: 'WARN', transformedContent: 'wire transfer done for [ssn]' });
    expect(JSON.stringify(approved.body)).not.toContain('123-45-6789');
  });
});

describe('health and drain', () => {
  test('/healthz and /readyz answer without the API key', async () => {
    const pdp = await start();
    expect(await fetch(`${pdp.url}/healthz`).then((r) => [r.status, r.headers.get('content-type')])).toEqual([
      200,
      'application/json; charset=utf-8',
    ]);
    expect(await fetch(`${pdp.url}/readyz`).then(async (r) => [r.status, await r.json()])).toEqual([
      200,
      { status: 'ready' },
    ]);
  });

  test('drain(): the decision in flight is answered, no new decision is taken, then the PDP is closed', async () => {
    const pdp = await start();
    pdp.setFault({ kind: 'slow', bytesPerSecond: 400 });
    const inFlight = refund(pdp, 1);
    await new Promise((r) => setTimeout(r, 100));
    const drained = pdp.drain(10_000);
    const late = await refund(pdp, 1).then(
      (r) => r.status,
      () => 'refused',
    );
    expect([503, 'refused']).toContain(late);
    const answered = await inFlight;
    expect([answered.status, answered.body.verdict]).toEqual([200, 'ALLOW']);
    await drained;
    await expect(fetch(`${pdp.url}/healthz`)).rejects.toThrow();
  });
});
