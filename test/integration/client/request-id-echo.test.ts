/**
 * Rule 4's echo (CONTRACT.md section 3): with `requireEcho: true` a response without a matching body
 * `requestId` or `x-request-id` is ambiguous, so a stray response on a kept-alive connection can never
 * answer another decision. Without it, an absent echo is accepted (a present one must match).
 */
import { describe, expect, it } from 'vitest';
import { answer } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp({ retries: 0 });
const { clients } = fake;
const client = clients.client.bind(clients);

describe('requireEcho', () => {
  it('refuses an answer with no echo at all (ambiguous_decision)', async () => {
    fake.pdp.handler = (_q, r) => answer(r, { verdict: 'ALLOW' });
    expect((await client({ requireEcho: true }).checkInput('x')).synthesized?.code).toBe('ambiguous_decision');
  });

  it('accepts an echo in the body or in the x-request-id header', async () => {
    fake.pdp.handler = (q, r) => answer(r, { verdict: 'ALLOW', requestId: q.body.requestId });
    expect((await client({ requireEcho: true }).checkInput('x')).verdict).toBe('ALLOW');
    fake.pdp.handler = (q, r) => answer(r, { verdict: 'ALLOW' }, 200, { 'x-request-id': String(q.body.requestId) });
    expect((await client({ requireEcho: true }).checkInput('x')).verdict).toBe('ALLOW');
  });

  it('without requireEcho an absent echo is accepted, a wrong one never', async () => {
    fake.pdp.handler = (_q, r) => answer(r, { verdict: 'ALLOW' });
    expect((await client().checkInput('x')).verdict).toBe('ALLOW');
    fake.pdp.handler = (_q, r) => answer(r, { verdict: 'ALLOW', requestId: 'another' });
    expect((await client().checkInput('x')).synthesized?.code).toBe('ambiguous_decision');
  });
});

describe('context_egress names the tool whose result the content is', () => {
  it('sends tool as given, and refuses one that is not a tool name (invalid_request, no request)', async () => {
    const pep = client();
    await pep.checkContextEgress('result text', { tool: 'Fetch-Page' });
    expect(fake.pdp.received.at(-1)?.body).toMatchObject({ stage: 'context_egress', tool: 'Fetch-Page' });
    const before = fake.pdp.received.length;
    expect((await pep.checkContextEgress('x', { tool: '...' })).synthesized?.code).toBe('invalid_request');
    expect((await pep.checkContextEgress('x', { tool: 5 as never })).synthesized?.code).toBe('invalid_request');
    expect(fake.pdp.received.length).toBe(before);
  });

  it('other text stages never send a tool (an unknown call option there: invalid_request, no request)', async () => {
    const before = fake.pdp.received.length;
    const d = await client().checkOutput('x', { tool: 'a' } as never);
    expect(d.synthesized?.code).toBe('invalid_request');
    expect(fake.pdp.received.length).toBe(before);
  });
});

describe('tool names are at most 256 characters (CONTRACT.md section 6)', () => {
  it('a longer tool name is invalid_request with no request; 256 is accepted', async () => {
    const pep = client();
    const before = fake.pdp.received.length;
    expect((await pep.authorizeAction('t'.repeat(257), {})).synthesized?.code).toBe('invalid_request');
    expect((await pep.checkContextEgress('x', { tool: 't'.repeat(257) })).synthesized?.code).toBe('invalid_request');
    expect(fake.pdp.received.length).toBe(before);
    fake.pdp.handler = (q, r) => answer(r, { verdict: 'BLOCK', requestId: q.body.requestId });
    expect((await pep.authorizeAction('t'.repeat(256), {})).verdict).toBe('BLOCK');
    expect(() => client({ permits: false }).guardTool('t'.repeat(257), () => 1)).toThrow(TypeError);
    expect(() => client({ permits: false }).guardTool('t'.repeat(256), () => 1)).not.toThrow();
  });
});
