/**
 * The client pipeline of one session (src/core/client.ts): `createClient` resolves the options once
 * (a bad one is a TypeError naming it), `withSession` binds another session over the same shared
 * state, and after `close()` every decision is BLOCK pdp_unreachable ("client closed") without a
 * request (docs/fail-closed.md). Against a scripted PDP on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../../src/core/client.js';
import { type FakePdp, startFakePdp } from '../../support/fake-pdp.js';
import { optionOf } from '../../support/options.js';

let pdp: FakePdp;
beforeAll(async () => {
  pdp = await startFakePdp();
});
afterAll(() => pdp.close());

describe('createClient', () => {
  it('refuses a bad option, naming it in err.option', () => {
    expect(optionOf(() => createClient({ pdpUrl: 'ftp://x', agentId: 'a', session: 's' }))).toBe('pdpUrl');
    expect(optionOf(() => createClient({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: -1 }))).toBe(
      'timeoutMs',
    );
  });

  it('each stage method sends its stage, in the bound session', async () => {
    const c = createClient({ pdpUrl: pdp.url, agentId: 'a', session: 's-1' });
    pdp.received.length = 0;
    const d = await c.checkContextEgress('x', { tool: 'search' });
    await c.checkInput('x');
    await c.checkOutput('x');
    await c.checkDelivery('x');
    expect(d.verdict).toBe('ALLOW');
    expect(pdp.received.map((r) => [r.body.stage, r.body.session])).toEqual([
      ['context_egress', 's-1'],
      ['input', 's-1'],
      ['output', 's-1'],
      ['delivery', 's-1'],
    ]);
    expect(pdp.received[0]?.body.tool).toBe('search');
    await c.close();
  });

  it('withSession binds another session; an empty id is a TypeError', async () => {
    const c = createClient({ pdpUrl: pdp.url, agentId: 'a', session: 's-1' });
    pdp.received.length = 0;
    const other = c.withSession('s-2');
    await other.checkInput('x');
    expect(pdp.received[0]?.body.session).toBe('s-2');
    expect(other.internals.session).toBe('s-2');
    expect(() => c.withSession('')).toThrow(TypeError);
    await c.close();
  });

  it('internals say whether permits are on, off or not configured', async () => {
    const none = createClient({ pdpUrl: pdp.url, agentId: 'a', session: 's' });
    const off = createClient({ pdpUrl: pdp.url, agentId: 'a', session: 's', permits: false });
    expect([none.internals.permits, off.internals.permits]).toEqual([undefined, 'off']);
    await Promise.all([none.close(), off.close()]);
  });

  it('after close(), a decision is BLOCK pdp_unreachable and nothing is sent', async () => {
    const c = createClient({ pdpUrl: pdp.url, agentId: 'a', session: 's' });
    await c.close();
    pdp.received.length = 0;
    const d = await c.checkInput('x');
    expect(d).toMatchObject({ verdict: 'BLOCK', synthesized: { code: 'pdp_unreachable', message: 'client closed' } });
    expect(pdp.received).toHaveLength(0);
  });
});
