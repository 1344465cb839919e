/**
 * A tool's result as the text a model reads (src/enforce/text.ts, docs/adapters.md "What each host
 * shows the model"): what every result check sends to the PDP.
 */
import { describe, expect, it } from 'vitest';
import { resultText } from '../../../src/enforce/text.js';

describe('resultText', () => {
  it('a string is checked as it is', () => {
    expect(resultText('line 1\nline 2')).toBe('line 1\nline 2');
  });
  it("an MCP-shaped result of text parts is its parts' text, joined by line breaks", () => {
    expect(
      resultText({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toBe('a\nb');
  });
  it('an MCP-shaped result with a non-text part is checked as JSON (nothing is skipped)', () => {
    const r = {
      content: [
        { type: 'text', text: 'a' },
        { type: 'image', data: 'QUJD' },
      ],
    };
    expect(resultText(r)).toBe(JSON.stringify(r));
  });
  it('an object is its JSON, then each string holding a line break on lines of its own (as a model reads it)', () => {
    const r = { key: '-----BEGIN KEY-----\nabc\n-----END KEY-----', n: 1, list: ['x', 'y\nz'] };
    const lines = resultText(r).split('\n');
    expect(lines[0]).toBe(JSON.stringify(r));
    expect(lines.slice(1)).toEqual(['-----BEGIN KEY-----', 'abc', '-----END KEY-----', 'y', 'z']);
  });
  it('undefined is the empty text; numbers and null are their JSON', () => {
    expect(resultText(undefined)).toBe('');
    expect(resultText(42)).toBe('42');
    expect(resultText(null)).toBe('null');
  });
  it('a result that cannot be JSON (a cycle, a BigInt) throws TypeError: the caller refuses it', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => resultText(cyclic)).toThrow(TypeError);
    expect(() => resultText({ n: 1n })).toThrow(TypeError);
  });
});
