/** A separate reviewer key for the dev PDP's escalation endpoint: the agent's key cannot approve. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPep, type Pep } from '../../../../src/index.js';
import { REFUND_REVIEW } from '../../../../test/support/policies.js';
import { type DevPdp, startDevPdp } from '../../src/index.js';

const POLICY = {
  agents: ['support-ai'],
  latches: [REFUND_REVIEW],
};

let pdp: DevPdp;
let pep: Pep;
beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, apiKey: 'agent-key', reviewerApiKey: 'reviewer-key', log: false });
  pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's1', apiKey: 'agent-key' });
});
afterAll(async () => {
  await pep.close();
  await pdp.close();
});

async function resolve(id: string, key: string): Promise<number> {
  const res = await fetch(`${pdp.url}/api/escalations/${id}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ resolution: 'approve' }),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('reviewerApiKey', () => {
  it('the agent key is refused at the escalation endpoint; the reviewer key approves once', async () => {
    const args = { orderId: 'o1', amount: 900 };
    const held = await pep.authorizeAction('refund_payment', args);
    expect(held.verdict).toBe('ESCALATE');
    const id = held.escalationId as string;
    expect(await resolve(id, 'agent-key')).toBe(401);
    expect((await pep.authorizeAction('refund_payment', args)).verdict).toBe('ESCALATE');
    const again = (await pep.authorizeAction('refund_payment', args)).escalationId as string;
    expect(await resolve(again, 'reviewer-key')).toBe(200);
    const approved = await pep.authorizeAction('refund_payment', args);
    expect(approved.verdict).toBe('ALLOW');
    expect(approved.permitId).toBeDefined();
  });

  it('the reviewer key cannot ask for decisions', async () => {
    const reviewer = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's1', apiKey: 'reviewer-key' });
    const d = await reviewer.checkInput('x');
    expect(d.synthesized?.status).toBe(401);
    await reviewer.close();
  });

  it('refuses a reviewer key equal to the API key, naming reviewerApiKey', async () => {
    await expect(startDevPdp({ policy: POLICY, apiKey: 'same', reviewerApiKey: 'same' })).rejects.toMatchObject({
      name: 'TypeError',
      option: 'reviewerApiKey',
    });
  });
});

describe('without a reviewerApiKey, escalations cannot be resolved over HTTP', () => {
  it.each([
    ['no keys at all', {}, {}],
    ['only an API key', { apiKey: 'agent-key' }, { authorization: 'Bearer agent-key' }],
  ])('%s: the escalation endpoint answers 404 and the hold stands', async (_what, keys, headers) => {
    const own = await startDevPdp({ policy: POLICY, log: false, ...keys });
    try {
      const agent = createPep({ pdpUrl: own.url, agentId: 'support-ai', session: 's1', ...keys });
      const args = { orderId: 'o2', amount: 901 };
      const held = await agent.authorizeAction('refund_payment', args);
      expect(held.verdict).toBe('ESCALATE');
      const res = await fetch(`${own.url}/api/escalations/${held.escalationId}`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ resolution: 'approve' }),
      });
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ code: 'not_found' });
      expect((await agent.authorizeAction('refund_payment', args)).verdict).toBe('ESCALATE');
      // in process, the operator still can
      own.resolveEscalation((await agent.authorizeAction('refund_payment', args)).escalationId as string, 'approve');
      expect((await agent.authorizeAction('refund_payment', args)).verdict).toBe('ALLOW');
      await agent.close();
    } finally {
      await own.close();
    }
  });
});
