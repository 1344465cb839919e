/**
 * jsonErrorOffset: where a text stops being JSON (RFC 8259), for a CLI usage error's "JSON position"
 * (CONTRACT.md section 11), on the texts the parser's message names no position for.
 */
import { describe, expect, it } from 'vitest';
import { jsonErrorOffset } from '../../../src/internal/json-position.js';

describe('jsonErrorOffset', () => {
  it('names the first character that cannot continue the text', () => {
    expect(jsonErrorOffset('{"a":,}')).toEqual({ at: 5, ended: false });
    expect(jsonErrorOffset('{"a" 1}')).toEqual({ at: 5, ended: false });
    expect(jsonErrorOffset('{orderId')).toEqual({ at: 1, ended: false });
    expect(jsonErrorOffset('[1,]')).toEqual({ at: 3, ended: false });
    expect(jsonErrorOffset('01')).toEqual({ at: 1, ended: false });
    expect(jsonErrorOffset('"a\\x"')).toEqual({ at: 3, ended: false });
    expect(jsonErrorOffset('"\\u12G4"')).toEqual({ at: 5, ended: false });
    expect(jsonErrorOffset('"a\u0001"')).toEqual({ at: 2, ended: false });
    expect(jsonErrorOffset('tru ')).toEqual({ at: 3, ended: false });
    expect(jsonErrorOffset('{} x')).toEqual({ at: 3, ended: false });
    expect(jsonErrorOffset('\ufeff{}')).toEqual({ at: 0, ended: false });
  });

  it('says when the text ends early, at its length', () => {
    expect(jsonErrorOffset('{"agents":\n')).toEqual({ at: 11, ended: true });
    expect(jsonErrorOffset('{"keys":[')).toEqual({ at: 9, ended: true });
    expect(jsonErrorOffset('')).toEqual({ at: 0, ended: true });
    expect(jsonErrorOffset('"abc')).toEqual({ at: 4, ended: true });
    expect(jsonErrorOffset('1e')).toEqual({ at: 2, ended: true });
  });

  it('is undefined for a JSON text, and for one nested too deeply to scan (no position rather than a wrong one)', () => {
    expect(jsonErrorOffset(' {"a": [1, -2.5e+3, true, false, null, "\\u00e9\\n"]} ')).toBeUndefined();
    expect(jsonErrorOffset(`${'['.repeat(200_000)}x`)).toBeUndefined();
  });
});
