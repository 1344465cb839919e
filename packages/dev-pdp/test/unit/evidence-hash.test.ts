import { evidenceRecordHash } from 'agent-pep/internal';
import { describe, expect, it } from 'vitest';
import { recordHash } from '../../src/evidence-hash.js';

const base = {
  seq: 1,
  ts: '2026-12-06T03:00:00.000Z',
  decisionId: 'dec_abc',
  requestId: 'req-1',
  agentId: 'support-ai',
  session: 'sess_1',
  stage: 'input',
  verdict: 'ALLOW',
  latches: [],
  simulated: false,
  prevHash: null,
};

const records: Record<string, Record<string, unknown>> = {
  'a minimal first record': base,
  'every simple member': {
    ...base,
    seq: 9_007_199_254_740_991,
    latches: ['b', 'a', 'é'],
    labels: ['pii'],
    grants: [],
    reason: 'a "quoted"\n\\ reason \u2028 \u0001 😀',
    tool: 'send_money',
    argsHash: 'h1',
    toolPin: 'pin',
    contentHash: 'c1',
    escalationId: 'esc_1',
    outcome: 'approve',
    by: 'ana',
    note: 'ok ✓',
    prevHash: 'p1',
    simulated: true,
  },
  'a member left undefined': { ...base, reason: undefined, tool: undefined },
  'an audit list': { ...base, audit: [{ latch: 'l1', verdict: 'BLOCK' }] },
  'a visibility object': { ...base, visibility: { size: 3, decided: 2, hidden: ['x'] } },
  'an unknown member': { ...base, extra: { z: 1, a: [1.5, 'x'] } },
  'a fractional number': { ...base, seq: 1.5 },
  'a hash and sig left out': { ...base, hash: 'h', sig: 's' },
};

describe('the evidence record hash fast path (docs/dev-pdp.md: RFC 8785, SHA-256)', () => {
  for (const [name, record] of Object.entries(records)) {
    it(`hashes ${name} to the SDK's evidenceRecordHash bytes`, () => {
      expect(recordHash(record)).toBe(evidenceRecordHash(record));
    });
  }

  it('refuses a record with an unpaired surrogate, as the SDK does (no hash, no gap in the chain)', () => {
    for (const record of [
      { ...base, reason: 'bad \ud800' },
      { ...base, latches: ['\udc00'] },
    ]) {
      expect(() => evidenceRecordHash(record)).toThrow(TypeError);
      expect(() => recordHash(record)).toThrow(TypeError);
    }
  });

  it('refuses a number that is not finite, as the SDK does', () => {
    expect(() => recordHash({ ...base, seq: Number.NaN })).toThrow(TypeError);
  });
});
