/**
 * No request can stall the dev PDP: the example policy's regexes are RE2 (linear time) and tool globs
 * are linear, so inputs that took tens of seconds with backtracking regexes are answered at once.
 * (Assertions are on answers, not on time; the deadline below is a generous bound.)
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPep, type Pep } from '../../../../src/index.js';
import { type DevPdp, startDevPdp } from '../../src/index.js';

let pdp: DevPdp;
let pep: Pep;
beforeAll(async () => {
  const policy = readFileSync(new URL('../../../../demo/policy.json', import.meta.url), 'utf8');
  pdp = await startDevPdp({ policy, log: false });
  pep = createPep({
    pdpUrl: pdp.url,
    agentId: 'support-ai',
    session: 's',
    timeoutMs: 20_000,
    retries: 0,
    permits: false,
  });
});
afterAll(async () => {
  await pep.close();
  await pdp.close();
});

describe('the example policy answers hostile inputs (RE2 regexes, linear globs)', () => {
  test('checkOutput of 100,000 spaces is decided by the PDP', async () => {
    const d = await pep.checkOutput(' '.repeat(100_000));
    expect(d.synthesized).toBeUndefined();
    expect(d.verdict).toBe('ALLOW');
  });

  test('context_egress of ~128 KB of label-and-space patterns is decided by the PDP', async () => {
    // the shapes the old lookbehinds backtracked on: a label, then long runs of \s* and quotes
    const text = `${'password '.repeat(4000)}${' '.repeat(40_000)}${'date of birth is  '.repeat(2500)}`;
    expect(text.length).toBeGreaterThan(120_000);
    const d = await pep.checkContextEgress(text);
    expect(d.synthesized).toBeUndefined();
    expect(['ALLOW', 'WARN', 'BLOCK']).toContain(d.verdict);
  });

  test('delivery of ~128 KB of digits and separators (phone, card and IBAN shapes) is decided by the PDP', async () => {
    const d = await pep.checkDelivery('1-2 3.4 '.repeat(16_000));
    expect(d.synthesized).toBeUndefined();
  });
});
