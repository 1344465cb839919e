import { describe, expect, it } from 'vitest';
import { normalizeToolName } from '../../../src/internal/tool-name.js';

describe('normalizeToolName (CONTRACT section 4)', () => {
  it.each([
    ['refundPayment', 'refund_payment'],
    ['Refund-Payment', 'refund_payment'],
    [' refund.payment ', 'refund_payment'],
    ['refund payment', 'refund_payment'],
    ['refund_payment', 'refund_payment'],
    ['REFUND_PAYMENT', 'refund_payment'],
    ['refund--payment..now', 'refund_payment_now'],
    ['__refund__', 'refund'],
    ['sendEmail2User', 'send_email2_user'],
    ['v2Api', 'v2_api'],
    ['getHTTPResponse', 'get_httpresponse'],
    ['HTTPRequest', 'httprequest'],
    // full-width letters become ASCII through NFKC, and then the camelCase rule applies
    ['ＲｅｆｕｎｄＰａｙｍｅｎｔ', 'refund_payment'],
    ['ｒｅｆｕｎｄ－ｐａｙｍｅｎｔ', 'refund_payment'],
    // the ligature fi is two ASCII letters after NFKC
    ['\uFB01le_read', 'file_read'],
    // letters outside ASCII are not [a-z0-9]: each run becomes one '_'
    ['Ünïcode', 'n_code'],
    ['tool\u00A0name', 'tool_name'],
  ])('%j -> %j', (input, expected) => {
    expect(normalizeToolName(input)).toBe(expected);
  });

  it.each(['', ' ', '___', '-.-', '日本語', '\u00A0\t\n'])('%j normalizes to nothing: TypeError', (input) => {
    expect(() => normalizeToolName(input)).toThrow(TypeError);
  });

  it('refuses a non-string with TypeError', () => {
    expect(() => normalizeToolName(42 as unknown as string)).toThrow(TypeError);
    expect(() => normalizeToolName(undefined as unknown as string)).toThrow(TypeError);
  });

  it('is idempotent', () => {
    for (const name of ['refundPayment', ' A.b-C ', 'ＲｅｆｕｎｄPayment', 'x1Y2z']) {
      const once = normalizeToolName(name);
      expect(normalizeToolName(once)).toBe(once);
      expect(once).toMatch(/^[a-z0-9]+(_[a-z0-9]+)*$/);
    }
  });
});

describe('normalizeToolName cache', () => {
  it('gives the same answer on repeated calls, and still throws for names that normalize to nothing', () => {
    for (let i = 0; i < 3; i++) {
      expect(normalizeToolName('refundPayment')).toBe('refund_payment');
      expect(normalizeToolName(' refund.payment ')).toBe('refund_payment');
      expect(() => normalizeToolName('..')).toThrow(TypeError);
    }
    for (let i = 0; i < 2000; i++) expect(normalizeToolName(`tool${i}X`)).toBe(`tool${i}_x`);
    expect(normalizeToolName('x'.repeat(300))).toBe('x'.repeat(300));
  });
});
