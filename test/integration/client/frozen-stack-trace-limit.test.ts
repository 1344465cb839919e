/**
 * Where `Error.stackTraceLimit` is read-only (`node --frozen-intrinsics`, a hardened runtime), the
 * internal AttemptFailure (src/internal/failure.ts), which mutes stack traces while it is built, still
 * builds: a refused connection is still `pdp_unreachable` at once (not a wait for the deadline), a
 * malformed answer still `invalid_response`, and nothing is thrown out of band.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPep, type Pep } from '../../../src/index.js';
import { AttemptFailure } from '../../../src/internal/failure.js';
import { answer, closedPort, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';

let original: PropertyDescriptor | undefined;
const uncaught: unknown[] = [];
const onUncaught = (e: unknown): void => {
  uncaught.push(e);
};

/** As `--frozen-intrinsics` leaves it: `Error.stackTraceLimit` read-only (kept configurable to restore it). */
function freezeStackTraceLimit(): void {
  original = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
  Object.defineProperty(Error, 'stackTraceLimit', {
    value: Error.stackTraceLimit,
    writable: false,
    configurable: true,
  });
}

beforeEach(() => {
  uncaught.length = 0;
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
});
afterEach(() => {
  if (original) Object.defineProperty(Error, 'stackTraceLimit', original);
  original = undefined;
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
});

describe('AttemptFailure where Error.stackTraceLimit is read-only', () => {
  it('constructing one does not throw, and the limit stays what it was', () => {
    freezeStackTraceLimit();
    const before = Error.stackTraceLimit;
    const f = new AttemptFailure('pdp_unreachable', 'PDP request failed');
    expect([f.code, f.message]).toEqual(['pdp_unreachable', 'PDP request failed']);
    expect(Error.stackTraceLimit).toBe(before);
  });

  it('a refused connection is still BLOCK pdp_unreachable from the attempt itself, with nothing thrown out of band', async () => {
    const url = await closedPort();
    // A deadline far beyond the test's timeout: only an answer from the refused attempt itself can end it.
    const pep: Pep = createPep({ pdpUrl: url, agentId: 'a', session: 's', timeoutMs: 60_000, retries: 0 });
    freezeStackTraceLimit();
    const d = await pep.checkInput('hello');
    await pep.close();
    expect([d.verdict, d.synthesized?.code]).toEqual(['BLOCK', 'pdp_unreachable']);
    expect(uncaught).toEqual([]);
  });

  it('a PDP answer that is not JSON is still invalid_response', async () => {
    const pdp: FakePdp = await startFakePdp((_req, res) => answer(res, 'not json'));
    const pep: Pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', timeoutMs: 1500, retries: 0 });
    freezeStackTraceLimit();
    try {
      const d = await pep.checkInput('hello');
      expect([d.verdict, d.synthesized?.code]).toEqual(['BLOCK', 'invalid_response']);
    } finally {
      await pep.close();
      await pdp.close();
    }
  });
});
