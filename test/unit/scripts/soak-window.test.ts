/**
 * The chaos soak's replay rule (scripts/soak.js, docs/permits.md "When Redis loses its data"): after a
 * Redis restart, a used permit may be accepted once more only when its claim may have been lost (it
 * was used before Redis was known dead) and it was issued within the clock tolerance before the loss.
 * The loss is timed when Redis is known dead, not when the stop began: a CI soak counted a permit
 * used while Redis was being killed (its claim lost, as documented) as a replay outside the window.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain JS script without types
import { inLossWindow, restartLosingData } from '../../../scripts/soak-window.js';

const TOLERANCE_SEC = 5;
const noop = async (): Promise<void> => {};

describe('chaos soak: the documented replay window after a Redis data loss', () => {
  it('a permit used while Redis was being stopped is in the window (its claim may be lost with the data)', async () => {
    let usedAt = 0;
    const stop = async () => {
      await sleep(3); // the kill is under way
      usedAt = Date.now(); // a verify starts: Redis is still up, its claim is made, then lost
      await sleep(3);
    };
    const lostAt: number = await restartLosingData(stop, noop, noop);
    expect(inLossWindow(usedAt, usedAt - 1_000, lostAt, TOLERANCE_SEC)).toBe(true);
  });

  it('a permit used after Redis came back is outside the window (its claim is in the new data)', async () => {
    const lostAt: number = await restartLosingData(noop, () => sleep(2), noop);
    const usedAt = Date.now() + 1;
    expect(inLossWindow(usedAt, usedAt - 1_000, lostAt, TOLERANCE_SEC)).toBe(false);
  });

  it('a permit issued more than the clock tolerance before the loss is outside the window', async () => {
    const lostAt: number = await restartLosingData(noop, noop, noop);
    expect(inLossWindow(lostAt - 10_000, lostAt - TOLERANCE_SEC * 1000 - 1, lostAt, TOLERANCE_SEC)).toBe(false);
    expect(inLossWindow(lostAt - 10_000, lostAt - TOLERANCE_SEC * 1000, lostAt, TOLERANCE_SEC)).toBe(true);
  });

  it('before any loss, no permit is in the window', () => {
    expect(inLossWindow(Date.now(), Date.now(), undefined, TOLERANCE_SEC)).toBe(false);
  });

  it('the restart runs stop, pause and start in that order, and times the loss after stop', async () => {
    const order: string[] = [];
    let stoppedAt = 0;
    const lostAt: number = await restartLosingData(
      async () => {
        await sleep(3);
        stoppedAt = Date.now();
        order.push('stop');
      },
      async () => {
        order.push('pause');
      },
      async () => {
        order.push('start');
      },
    );
    expect(order).toEqual(['stop', 'pause', 'start']);
    expect(lostAt).toBeGreaterThanOrEqual(stoppedAt);
  });
});
