/**
 * The request body written by hand (`encodeRequest`, src/wire/agent-pep.ts) against `JSON.stringify`:
 * the same text for any request a stage call makes, whatever its content holds (quotes, backslashes,
 * control characters, surrogate pairs, lone surrogates).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalSnapshotJson } from '../../src/permit/hash.js';
import { type AuthorizeRequest, encodeRequest } from '../../src/wire/agent-pep.js';

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom(
      'a',
      ' ',
      '"',
      '\\',
      '\n',
      '\u0000',
      '\u001f',
      '\u007f',
      'é',
      '😀',
      '\ud800',
      '\udfff',
      '\u2028',
    ),
    maxLength: 12,
  }),
  fc.string({ maxLength: 300 }),
);

describe('encodeRequest writes what JSON.stringify writes', () => {
  it('for any text stage request, with or without a tool, simulated or not', () => {
    fc.assert(
      fc.property(
        text,
        text,
        fc.constantFrom('s', 'other', 'a"b'),
        fc.constantFrom('input', 'context_egress', 'output', 'delivery' as const),
        fc.option(text, { nil: undefined }),
        fc.boolean(),
        (content, agentId, session, stage, tool, simulated) => {
          const req: AuthorizeRequest = { agentId, session, stage, requestId: 'r' };
          req.content = content;
          if (tool !== undefined) req.tool = tool;
          if (simulated) req.simulated = true;
          expect(encodeRequest(req)).toBe(JSON.stringify(req));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('for any action request without the args text, and the same value with it', () => {
    fc.assert(
      fc.property(text, fc.dictionary(text, fc.oneof(text, fc.integer(), fc.boolean())), (tool, args) => {
        const req: AuthorizeRequest = { agentId: 'a', session: 's', stage: 'action', requestId: 'r', tool, args };
        expect(encodeRequest(req)).toBe(JSON.stringify(req));
        expect(JSON.parse(encodeRequest(req, canonicalSnapshotJson(args)))).toEqual(JSON.parse(JSON.stringify(req)));
      }),
      { numRuns: 500 },
    );
  });
});
