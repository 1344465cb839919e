/**
 * Value extractors (docs/dev-pdp.md, "Value flows"): the built-ins find e-mail addresses, URLs and
 * hosts, IBANs (check sum) and card numbers (Luhn) in their normal forms, also inside longer text;
 * the policy's own kinds; keyed hashes that differ by kind and by key; sources merged and bounded.
 */
import { describe, expect, test } from 'vitest';
import { compileValues, VALUE_LIMITS, valueHash, valuesAfter, valuesIn } from '../../../src/sessions/values.js';

const KEY = new Uint8Array(32).fill(1);
const extractors = compileValues([{ name: 'ticket', pattern: 'TCK-[0-9]{4}' }]);
const kinds = (text: string) => valuesIn(extractors, KEY, text).map((v) => v.kind);
const same = (a: string, b: string) =>
  valuesIn(extractors, KEY, a)
    .map((v) => v.hash)
    .join() ===
  valuesIn(extractors, KEY, b)
    .map((v) => v.hash)
    .join();

describe('built-in and policy extractors', () => {
  test('each kind, in its normal form', () => {
    expect(kinds('mail Ann@Example.ORG now')).toEqual(['email', 'host']);
    expect(same('Ann@Example.ORG', 'ann@example.org')).toBe(true);
    expect(kinds('see https://Pay.Example.net/x?y=1.')).toEqual(['url', 'host']);
    expect(same('https://PAY.example.net/a', 'https://pay.example.net/a')).toBe(true);
    expect(kinds('IBAN DE89 3704 0044 0532 0130 00 TODAY')).toEqual(['iban']);
    expect(same('DE89 3704 0044 0532 0130 00', "('DE89370400440532013000')")).toBe(true);
    expect(kinds('IBAN DE00 3704 0044 0532 0130 00')).toEqual([]);
    expect(kinds('card 4111 1111 1111 1111')).toEqual(['card']);
    expect(kinds('card 4111 1111 1111 1112')).toEqual([]);
    expect(kinds('ref TCK-1234')).toEqual(['ticket']);
  });

  test('a hash depends on the kind, the value and the key', () => {
    expect(valueHash(KEY, 'a', 'x')).not.toBe(valueHash(KEY, 'b', 'x'));
    expect(valueHash(KEY, 'a', 'x')).not.toBe(valueHash(new Uint8Array(32), 'a', 'x'));
    expect(valueHash(KEY, 'a', 'x')).toHaveLength(22);
  });
});

describe('kept values', () => {
  test('a value seen again gains its new source once; the session keeps at most its bound', () => {
    const web = { tool: 'web_fetch', groups: ['web'], origin: 'tool:web_fetch' };
    const found = valuesIn(extractors, KEY, 'a@b.example');
    const once = valuesAfter([], found, web);
    const twice = valuesAfter(once, found, web);
    expect(twice.find((v) => v.kind === 'email')?.sources).toHaveLength(1);
    const user = valuesAfter(twice, found, { tool: 'user', groups: [], origin: 'user' });
    expect(user.find((v) => v.kind === 'email')?.sources.map((s) => s.tool)).toEqual(['web_fetch', 'user']);
    let many = user;
    for (let i = 0; i < VALUE_LIMITS.perSession + 10; i++) {
      many = valuesAfter(many, [{ kind: 'k', hash: `h${i}` }], web);
    }
    expect(many).toHaveLength(VALUE_LIMITS.perSession);
  });
});
