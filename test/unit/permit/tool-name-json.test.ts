/**
 * The tool name's JSON text in the `act_hash` text and the AuthZEN body (issue 43): a normalized name is
 * written between quotes without `JSON.stringify`; the text must be what `JSON.stringify` writes, for
 * every name, normalized or not, so that the hashed text stays RFC 8785.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalizeToolName } from '../../../src/internal/tool-name.js';
import { actionHashOfCanonical, referenceActionHash, toolNameJson } from '../../../src/permit/hash.js';

describe('toolNameJson', () => {
  it('writes every normalized name as JSON.stringify does', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }), (raw) => {
        let name: string;
        try {
          name = normalizeToolName(raw);
        } catch {
          return;
        }
        expect(toolNameJson(name)).toBe(JSON.stringify(name));
      }),
      { numRuns: 500 },
    );
  });

  it('escapes a name that is not normalized (quotes, backslashes, controls, non-ASCII), as JSON.stringify does', () => {
    for (const name of ['a"b', 'a\\b', 'a\nb', 'Refund', 'café', '', 'a b', '\u2028', 'x","args":{}']) {
      expect(toolNameJson(name)).toBe(JSON.stringify(name));
    }
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 16 }), (name) => {
        expect(toolNameJson(name)).toBe(JSON.stringify(name));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps act_hash the reference hash (RFC 8785 over { tool, args }) for the canonical args text', () => {
    const args = { orderId: 'ord_1842', amount: 129.5, currency: 'EUR' };
    const text = '{"amount":129.5,"currency":"EUR","orderId":"ord_1842"}';
    for (const tool of ['refund_payment', 'refund_payment_7', 'x']) {
      expect(actionHashOfCanonical(tool, text)).toBe(referenceActionHash(tool, args));
    }
  });
});
