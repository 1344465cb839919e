/**
 * The user's words are keyed with a plain-JavaScript HMAC-SHA-256 (issue 41). It must be the very HMAC
 * node:crypto computes, for every key and message length (padding across block bounds, long keys), or a
 * value would stop matching the words a session kept.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { hmacSha256 } from '../../../src/sessions/hmac.js';
import { runHash } from '../../../src/sessions/words.js';

describe('hmacSha256', () => {
  test('is node:crypto HMAC-SHA-256 for keys of 0 to 100 bytes and messages of 0 to 200 bytes', () => {
    for (const size of [0, 1, 32, 63, 64, 65, 100]) {
      const key = new Uint8Array(randomBytes(size));
      const hmac = hmacSha256(key);
      for (let length = 0; length <= 200; length++) {
        const message = new Uint8Array(randomBytes(length));
        const expected = createHmac('sha256', key).update(message).digest('hex');
        expect(Buffer.from(hmac(message)).toString('hex'), `key ${size}, message ${length}`).toBe(expected);
      }
    }
  });

  test('a run of words hashes as before: base64url of HMAC-SHA-256(key, "w" NUL run), 22 characters', () => {
    const key = new Uint8Array(randomBytes(32));
    for (const run of ['', 'de89 3704', 'DE893704', 'straße ß', '支付 一百', 'x'.repeat(300)]) {
      const before = createHmac('sha256', key).update('w\u0000').update(run, 'utf8').digest('base64url').slice(0, 22);
      expect(runHash(key, run)).toBe(before);
    }
  });
});
