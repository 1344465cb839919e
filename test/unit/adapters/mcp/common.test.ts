/**
 * The MCP server guard's session (src/adapters/mcp/common.ts; CONTRACT.md section 16): the request's
 * `_meta['agent-pep/session']`, or the `session` function's answer, stands for the per-call option of the
 * one rule (`sessionOf`); the server's own PEP session never fills in, and a bad one is none (refused).
 */
import { describe, expect, it } from 'vitest';
import { requestSession } from '../../../../src/adapters/mcp/common.js';

const withMeta = (session: unknown) => ({ name: 't', _meta: { 'agent-pep/session': session } });

describe('requestSession', () => {
  it("takes the request's _meta session when the server has no session function", () => {
    expect(requestSession(undefined, 'tools/call', withMeta('sess_c'), {})).toBe('sess_c');
  });

  it('none without one, and none for a malformed one: never the server’s own session', () => {
    for (const params of [{ name: 't' }, withMeta(''), withMeta('  '), withMeta(7), withMeta('\ud800')]) {
      expect(requestSession(undefined, 'tools/call', params, {})).toBeUndefined();
    }
  });

  it("the session function's answer wins over _meta; a throw or a bad answer is none", () => {
    expect(requestSession(() => 'sess_fn', 'tools/call', withMeta('sess_c'), {})).toBe('sess_fn');
    expect(
      requestSession(
        () => {
          throw new Error('no auth');
        },
        'tools/call',
        withMeta('sess_c'),
        {},
      ),
    ).toBeUndefined();
    expect(requestSession(() => '', 'tools/call', withMeta('sess_c'), {})).toBeUndefined();
  });
});
