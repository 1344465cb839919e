/**
 * Option errors in tests: which path a `TypeError` names (CONTRACT.md section 2, `err.option`).
 */
import { expect } from 'vitest';

/** Runs `f`, expects a `TypeError`, and returns its `option` (the offending path). */
export function optionOf(f: () => unknown): unknown {
  let caught: unknown;
  try {
    f();
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(TypeError);
  return (caught as { option?: unknown }).option;
}

/**
 * Expects `f` to throw a `TypeError` whose `option` is `option`: the test tells which rule fired, not
 * only that one did.
 */
export function expectOptionError(f: () => unknown, option: string): void {
  expect(optionOf(f)).toBe(option);
}

/** Expects `work` (a promise, or a function returning one) to reject with a `TypeError` whose `option` is `option`. */
export async function expectOptionRejection(
  work: Promise<unknown> | (() => Promise<unknown>),
  option: string,
): Promise<void> {
  let caught: unknown;
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(TypeError);
  expect((caught as { option?: unknown }).option).toBe(option);
}
