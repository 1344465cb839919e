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
