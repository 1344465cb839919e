/**
 * `sessionStep` (docs/dev-pdp.md, "Session integrity"): per session id, a request carries the count it
 * makes once decided; a simulated one the count so far (none before the first decided step).
 */
import { expect, test } from 'vitest';
import { SessionSteps } from '../../../src/core/session-steps.js';

test('counts per session, from 1; a simulated request carries the count so far', () => {
  const steps = new SessionSteps();
  expect(steps.stepFor('a', false)).toBeUndefined();
  expect(steps.stepFor('a', true)).toBe(1);
  steps.advance('a');
  steps.advance('a');
  expect(steps.stepFor('a', true)).toBe(3);
  expect(steps.stepFor('a', false)).toBe(2);
  expect(steps.stepFor('b', true)).toBe(1);
});
