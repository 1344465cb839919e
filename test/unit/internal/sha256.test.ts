/**
 * The JavaScript SHA-256 and base64url (src/internal/sha256.ts, base64url.ts) of runtimes without
 * node:crypto give exactly what node:crypto and Buffer give: act_hash must not depend on the runtime.
 */
import { hash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromBase64url } from '../../../src/internal/base64url.js';
import { sha256Base64url } from '../../../src/internal/sha256.js';

describe('sha256Base64url', () => {
  it('matches FIPS 180-4 vectors', () => {
    expect(sha256Base64url('')).toBe('47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU');
    expect(sha256Base64url('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
  });

  it('equals node:crypto on any string (block edges and non-ASCII included)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 200 })), (text) => {
        expect(sha256Base64url(text)).toBe(hash('sha256', text, 'base64url'));
      }),
      { numRuns: 300 },
    );
    for (const n of [55, 56, 63, 64, 65, 119, 120, 1000]) {
      expect(sha256Base64url('a'.repeat(n))).toBe(hash('sha256', 'a'.repeat(n), 'base64url'));
    }
  });
});

describe('fromBase64url', () => {
  it('decodes as Buffer does', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64url');
        expect(Buffer.from(fromBase64url(text) as Uint8Array)).toEqual(Buffer.from(bytes));
      }),
    );
  });

  it('refuses a character outside the alphabet and a length that leaves one character over', () => {
    expect(fromBase64url('ab+c')).toBeUndefined();
    expect(fromBase64url('abcde')).toBeUndefined();
  });
});
