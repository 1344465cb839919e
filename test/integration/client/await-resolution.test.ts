/**
 * `pep.awaitResolution(escalationId, { signal, timeoutMs })` against a running dev PDP: it resolves the
 * reviewer's answer (approved, denied, expired), `pending` at its deadline or on the caller's abort, and
 * `unavailable` when the PDP cannot say (down, hung, an unknown id): it never rejects on a PDP failure
 * and never says `approved` unless the PDP did. On `approved` the identical call is an ALLOW, once.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { createPep } from '../../../src/index.js';
import { sessionHarness } from '../../support/sessions.js';

const POLICY = {
  agents: ['agent'],
  latches: [{ id: 'review', stage: 'action', tool: 'refund_payment', verdict: 'ESCALATE', reason: 'needs review' }],
};
const harness = sessionHarness(POLICY);
afterEach(() => harness.closeAll());

async function held(extra: Record<string, unknown> = {}) {
  const pdp = await harness.start({ apiKey: 'agent-key', reviewerApiKey: 'reviewer-key', ...extra });
  const pep = harness.pepOf(pdp, 's1', { apiKey: 'agent-key' });
  const decision = await pep.authorizeAction('refund_payment', { amount: 900 });
  expect(decision.verdict).toBe('ESCALATE');
  return { pdp, pep, id: decision.escalationId as string };
}

describe('awaitResolution', () => {
  test('approved after the reviewer approves; the identical call is then an ALLOW, once', async () => {
    const { pdp, pep, id } = await held();
    const waiting = pep.awaitResolution(id, { timeoutMs: 10_000 });
    setTimeout(() => void pdp.resolveEscalation(id, 'approve'), 300);
    expect(await waiting).toEqual({ escalationId: id, status: 'approved', approved: true });
    expect((await pep.authorizeAction('refund_payment', { amount: 900 })).verdict).toBe('ALLOW');
    expect((await pep.authorizeAction('refund_payment', { amount: 900 })).verdict).toBe('ESCALATE');
  });

  test('denied, and expired when no reviewer answered in time', async () => {
    const { pdp, pep, id } = await held({ escalationTtlSec: 1 });
    await pdp.resolveEscalation(id, 'deny');
    expect(await pep.awaitResolution(id)).toMatchObject({ status: 'denied', approved: false });
    const other = (await pep.authorizeAction('refund_payment', { amount: 901 })).escalationId as string;
    expect(await pep.awaitResolution(other, { timeoutMs: 10_000 })).toMatchObject({ status: 'expired' });
  });

  test('pending when timeoutMs runs out or the caller aborts while the escalation is open', async () => {
    const { pep, id } = await held();
    expect(await pep.awaitResolution(id, { timeoutMs: 600 })).toMatchObject({ status: 'pending', approved: false });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    expect(await pep.awaitResolution(id, { signal: controller.signal })).toMatchObject({ status: 'pending' });
  });

  test('unavailable, never a rejection, for an unknown id, a wrong key, a PDP that is down or hung', async () => {
    const { pdp, pep, id } = await held();
    expect(await pep.awaitResolution('esc_unknown')).toMatchObject({ status: 'unavailable', approved: false });
    const wrongKey = harness.pepOf(pdp, 's1', { apiKey: 'not-the-key' });
    expect(await wrongKey.awaitResolution(id)).toMatchObject({ status: 'unavailable' });
    const url = pdp.url;
    await pdp.close();
    const down = createPep({ pdpUrl: url, agentId: 'agent', session: 's1', apiKey: 'agent-key', permits: false });
    harness.track(down);
    expect(await down.awaitResolution(id, { timeoutMs: 800 })).toMatchObject({ status: 'unavailable' });

    const sockets: Socket[] = [];
    const hung: Server = createServer((s) => sockets.push(s)); // accepts, never answers
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    harness.track({
      close: () => {
        for (const s of sockets) s.destroy();
        return new Promise((r) => hung.close(r));
      },
    });
    const port = (hung.address() as { port: number }).port;
    const slow = createPep({
      pdpUrl: `http://127.0.0.1:${port}`,
      agentId: 'agent',
      session: 's1',
      attemptTimeoutMs: 200,
      permits: false,
    });
    harness.track(slow);
    expect(await slow.awaitResolution(id, { timeoutMs: 1000 })).toMatchObject({ status: 'unavailable' });
  });

  test('a malformed id or option is a TypeError naming it', async () => {
    const { pep } = await held();
    await expect(pep.awaitResolution('../../x')).rejects.toMatchObject({ name: 'TypeError', option: 'escalationId' });
    await expect(pep.awaitResolution('esc_1', { timeoutMs: 0 })).rejects.toMatchObject({ option: 'timeoutMs' });
  });
});
