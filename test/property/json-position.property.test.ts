/**
 * Property: jsonErrorOffset (the JSON position of a CLI usage error, CONTRACT.md section 11) agrees with
 * `JSON.parse` on which texts are JSON, and wherever the parser's message names a position, names the
 * same one. Texts are JSON values written out and then mutated: characters inserted, deleted or
 * replaced (structural ones, escapes, control characters, non-ASCII), or cut short.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { jsonErrorOffset } from '../../src/internal/json-position.js';

const CHARS = ['{', '}', '[', ']', ',', ':', '"', '\\', 'u', '0', '1', '-', '.', 'e', 'E', '+', 't', 'n', 'f', 'a'];
const mutation = fc.tuple(
  fc.nat(),
  fc.constantFrom('insert', 'delete', 'replace', 'cut'),
  fc.constantFrom(...CHARS, ' ', '\n', '\t', '\u0001', 'x', '/', 'é'),
);

it('is undefined exactly for the texts JSON.parse accepts, and names the position the parser names', () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.boolean(), fc.array(mutation, { maxLength: 3 }), (value, pretty, mutations) => {
      let text = JSON.stringify(value, null, pretty ? 1 : 0) ?? 'null';
      for (const [p, kind, c] of mutations) {
        const at = p % (text.length + 1);
        if (kind === 'insert') text = text.slice(0, at) + c + text.slice(at);
        else if (kind === 'delete') text = text.slice(0, at) + text.slice(at + 1);
        else if (kind === 'replace') text = text.slice(0, at) + c + text.slice(at + 1);
        else text = text.slice(0, at);
      }
      let message: string | undefined;
      try {
        JSON.parse(text);
      } catch (e) {
        message = (e as Error).message;
      }
      const where = jsonErrorOffset(text);
      expect(where === undefined, text).toBe(message === undefined);
      const named = message === undefined ? null : /position (\d+)/.exec(message);
      if (named && where) expect(where.at, `${text} | ${message}`).toBe(Number(named[1]));
      if (where) expect(where.ended).toBe(where.at === text.length);
    }),
    { numRuns: 4000 },
  );
});
