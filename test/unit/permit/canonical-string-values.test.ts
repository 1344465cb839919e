import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { snapshotJsonObject } from '../../../src/internal/json.js';
import { canonicalSnapshotJson } from '../../../src/permit/hash.js';

// canonicalSnapshotJson writes a string with nothing to escape between quotes as it is (no
// JSON.stringify); every string that needs escaping must still come out as RFC 8785 writes it.
describe('canonicalSnapshotJson string values (RFC 8785 section 3.2.2.2)', () => {
  const strings = [
    '',
    'ord_1842',
    'damaged on arrival',
    'a"b',
    'a\\b',
    'line\nbreak',
    '\u0000',
    '\u001f',
    '\u007f',
    '\u2028\u2029',
    'é€😀',
    '\uffff',
    '</script>',
  ];

  it.each(strings)('a string value %j is written as canonicalize writes it', (s) => {
    const args = snapshotJsonObject({ v: s, list: [s, { k: s }] });
    expect(canonicalSnapshotJson(args)).toBe(canonicalize(args));
  });
});
