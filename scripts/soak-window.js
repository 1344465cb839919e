// The chaos soak's replay rule (scripts/soak.js; docs/permits.md, "When Redis loses its data"): which
// used permits the Redis replay store may accept once more after Redis lost its data. No side effects,
// so that test/unit/scripts/soak-window.test.ts can hold it.

/**
 * Restarts Redis losing its data: `stop`, then `pause`, then `start`.
 * @param {() => Promise<void>} stop - kills Redis; resolves once it is dead
 * @param {() => Promise<void>} pause - the time Redis stays down
 * @param {() => Promise<void>} start - starts Redis again, empty
 * @returns {Promise<number>} when the data was lost (ms since the Unix epoch): taken once Redis is
 *   known dead, since a claim made while it was being stopped may be lost with the rest
 */
export async function restartLosingData(stop, pause, start) {
  await stop();
  const lostAt = Date.now();
  await pause();
  await start();
  return lostAt;
}

/**
 * Whether a used permit may be accepted once more after the data loss at `lostAt`: its claim may have
 * been lost (the verify that used it started by then) and it was issued no earlier than the clock
 * tolerance before the loss. The store's own bound is its epoch (set after the restart, so later than
 * `lostAt`) less the tolerance: every permit it accepts again is in this window.
 * @param {number} usedAt - when the verify that used the permit started (ms since the Unix epoch)
 * @param {number} issuedAtMs - the permit's `iat`, in ms
 * @param {number | undefined} lostAt - the last data loss ({@link restartLosingData}), if any
 * @param {number} toleranceSec - the verifiers' and the store's clock tolerance, in seconds
 * @returns {boolean}
 */
export function inLossWindow(usedAt, issuedAtMs, lostAt, toleranceSec) {
  return lostAt !== undefined && usedAt <= lostAt && issuedAtMs >= lostAt - toleranceSec * 1000;
}
