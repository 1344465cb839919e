/**
 * What every runtime must report from the portable suite (test/fixtures/runtimes/suite.js): the
 * fail-closed cases on each transport, the permit used once, the adapter's ALLOW run and BLOCK not.
 */
import { expect } from 'vitest';
import { FAIL_CLOSED_CASES } from '../fixtures/runtimes/cases.js';

/** The results of test/fixtures/runtimes/cli.js (and the workerd worker's). */
export interface SuiteResult {
  defaultTransport: Record<string, string>;
  fetchTransport: Record<string, string>;
  permit: { verdict: string; hasPermit: boolean; first: string; second: string };
  permitOnFetch: SuiteResult['permit'];
  adapter: { ran: { refund: number; deleteAccount: number }; text: string };
  defaultStore: string;
}

/** Asserts a runtime's results; `defaultStore` is what `createPermitVerifier` without a store must do there. */
export function expectSuite(r: SuiteResult, defaultStore: 'accepted' | 'TypeError:replayStore'): void {
  expect(r.defaultTransport).toEqual(FAIL_CLOSED_CASES);
  expect(r.fetchTransport).toEqual(FAIL_CLOSED_CASES);
  for (const permit of [r.permit, r.permitOnFetch]) {
    expect(permit).toEqual({ verdict: 'ALLOW', hasPermit: true, first: 'verified', second: 'permit_replayed' });
  }
  expect(r.adapter.ran).toEqual({ refund: 1, deleteAccount: 0 });
  expect(r.defaultStore).toBe(defaultStore);
}
