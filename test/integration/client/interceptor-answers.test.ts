/**
 * A `before` interceptor's answer that cannot be read (src/core/interceptors.ts): a `then` getter that
 * throws, a Proxy whose every read throws. Asking whether it is a promise, or reading its members, is
 * the interceptor's throw: a synthesized BLOCK `interceptor_failed` naming it (docs/interceptors.md),
 * and in `authorizeActions` only its own call is blocked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPep, type Interceptor, type Pep } from '../../../src/index.js';
import { allowEcho, answer, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';

let pdp: FakePdp;
const clients: Pep[] = [];

beforeAll(async () => {
  // ALLOW for text stages; an action is answered BLOCK by the PDP itself (an action ALLOW needs a permit).
  pdp = await startFakePdp((req, res, socket) =>
    req.body.stage === 'action'
      ? answer(res, { verdict: 'BLOCK', requestId: req.body.requestId, reason: 'pdp says no' })
      : allowEcho(req, res, socket),
  );
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await pdp.close();
});

function client(interceptors: Interceptor[]): Pep {
  const pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 2000, interceptors });
  clients.push(pep);
  return pep;
}

/** An answer whose `then` throws when read (an interceptor's throw, by another road). */
function throwingThen(): never {
  return Object.defineProperty({ action: 'proceed' }, 'then', {
    get() {
      throw new Error('boom');
    },
    enumerable: false,
  }) as never;
}

/** A Proxy answer whose every read throws. */
function throwingProxy(): never {
  return new Proxy(
    {},
    {
      get() {
        throw new Error('boom');
      },
    },
  ) as never;
}

describe('an answer that cannot be read is interceptor_failed, as any throw', () => {
  it.each([
    ['a throwing then getter', throwingThen],
    ['a Proxy whose reads throw', throwingProxy],
  ])('%s: a synthesized BLOCK interceptor_failed naming the interceptor', async (_label, answer) => {
    const pep = client([{ name: 'faulty', before: answer }]);
    const d = await pep.checkInput('x');
    expect(d.verdict).toBe('BLOCK');
    expect([d.synthesized?.code, d.interceptor]).toEqual(['interceptor_failed', 'faulty']);
  });

  it('in authorizeActions, one faulty answer blocks only its own call; the others are decided by the PDP', async () => {
    const pep = client([
      { name: 'faulty', before: (step) => (step.tool === 'bad' ? throwingThen() : { action: 'proceed' }) },
    ]);
    const before = pdp.received.length;
    const ds = await pep.authorizeActions([
      { tool: 'good', args: { n: 1 } },
      { tool: 'bad', args: { n: 2 } },
    ]);
    expect(ds.map((d) => [d.verdict, d.synthesized?.code, d.reason])).toEqual([
      ['BLOCK', undefined, 'pdp says no'],
      ['BLOCK', 'interceptor_failed', "interceptor 'faulty' threw or rejected"],
    ]);
    expect(pdp.received.length - before).toBe(1);
  });
});
