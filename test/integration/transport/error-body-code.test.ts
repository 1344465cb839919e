/**
 * A non-200 is decided by its status (pdp_status); a short JSON error body `{ code, message }` names its
 * code in `synthesized.message` (CONTRACT.md section 6: "the PEP puts the code, not the body, into
 * synthesized.message"), and nothing but a short identifier is ever copied.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevPdp } from '../../../packages/dev-pdp/src/index.js';
import { createPep } from '../../../src/index.js';
import { answer, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';

let pdp: FakePdp;
beforeAll(async () => {
  pdp = await startFakePdp();
});
afterAll(async () => {
  await pdp.close();
});

async function decideOnce() {
  const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', retries: 0, timeoutMs: 3000 });
  try {
    return await pep.checkInput('x');
  } finally {
    await pep.close();
  }
}

describe('the error code of a non-200', () => {
  it('is named in synthesized.message, with the status', async () => {
    pdp.handler = (_q, r) => answer(r, { code: 'unknown_agent', message: 'agent is not listed' }, 404);
    const d = await decideOnce();
    expect(d.synthesized).toMatchObject({ code: 'pdp_status', status: 404 });
    expect(d.synthesized?.message).toBe(`PDP answered HTTP 404 (unknown_agent) at ${pdp.url}/api/policy/authorize`);
  });

  it('a 409 session_state_lost is the fail-closed code session_state_lost on every transport, telling the reader to start a new session', async () => {
    pdp.handler = (_q, r) => answer(r, { code: 'session_state_lost', message: 'no state' }, 409);
    const d = await decideOnce();
    expect(d).toMatchObject({ verdict: 'BLOCK', synthesized: { code: 'session_state_lost', status: 409 } });
    expect(d.synthesized?.message).toContain(`at ${pdp.url}/api/policy/authorize`);
    expect(d.synthesized?.message).toContain('start a new session');
  });

  it('is never content: a code that is not a short identifier, or the message, is not copied', async () => {
    pdp.handler = (_q, r) => answer(r, { code: 'the user said SECRET', message: 'SECRET' }, 400);
    const d = await decideOnce();
    expect(d.synthesized?.message).toBe(`PDP answered HTTP 400 at ${pdp.url}/api/policy/authorize`);
    expect(d.synthesized?.message).not.toContain('SECRET');
  });

  it('a body that hangs still settles on the status, well before the deadline', async () => {
    pdp.handler = (_q, r) => {
      r.writeHead(503, { 'content-type': 'application/json' });
      r.write('{"code":');
    };
    const t0 = performance.now();
    const d = await decideOnce();
    expect(performance.now() - t0).toBeLessThan(2500);
    expect(d.synthesized).toMatchObject({ code: 'pdp_status', status: 503 });
  });

  it('a wrong agentId at the dev PDP reads unknown_agent', async () => {
    const dev = await startDevPdp({ policy: { agents: ['support-ai'], latches: [] }, log: false });
    const pep = createPep({ pdpUrl: dev.url, agentId: 'suport-ai', session: 's', retries: 0 });
    const d = await pep.checkInput('x');
    await pep.close();
    await dev.close();
    expect(d.synthesized?.message).toBe(`PDP answered HTTP 404 (unknown_agent) at ${dev.url}/api/policy/authorize`);
  });

  it('a pdpUrl with a path names the URL tried, told apart from a wrong agent id and from an outage', async () => {
    const dev = await startDevPdp({ policy: { agents: ['support-ai'], latches: [] }, log: false });
    const pep = createPep({ pdpUrl: `${dev.url}/v1`, agentId: 'support-ai', session: 's', retries: 0 });
    const d = await pep.checkInput('x');
    await pep.close();
    await dev.close();
    expect(d.synthesized).toMatchObject({ code: 'pdp_status', status: 404 });
    expect(d.synthesized?.message).toContain(`at ${dev.url}/v1/api/policy/authorize`);
    expect(d.synthesized?.message).not.toContain('unknown_agent');
  });
});
