/**
 * The tool surface of a guarded MCP client (CONTRACT sections 13 and 16): a list filtered for the session
 * is marked `cacheScope: "private"` at 2026-07-28 (a client must not share it with another caller); an
 * unfiltered one, and a list of an earlier revision (no `cacheScope`), keep what the server said.
 */
import { describe, expect, it } from 'vitest';
import { makeToolSurface } from '../../../../src/adapters/mcp/surface.js';
import type { Pep } from '../../../../src/pep.js';

const tools = [
  { name: 'lookup_order', inputSchema: { type: 'object' } },
  { name: 'customer', inputSchema: { type: 'object' }, outputSchema: { type: 'object' } },
];

/** A surface that pins (no PDP needed): nothing hidden at the first list, which takes the pins. */
function surface(opts: { pin?: true; hideBlocked?: boolean } = {}) {
  return makeToolSurface({
    scope: 'test',
    pep: {} as Pep,
    readPage: async () => ({ tools }),
    server: () => ({ name: 'payments', version: '1' }),
    hideBlocked: opts.hideBlocked ?? false,
    pin: opts.pin,
    allowNew: false,
    session: undefined,
  });
}

describe('makeToolSurface: filterList', () => {
  it('a filtered 2026-07-28 list is marked cacheScope "private"', async () => {
    const out = (await surface({ pin: true }).filterList(
      { tools, ttlMs: 60_000, cacheScope: 'public', resultType: 'complete' },
      false,
      {},
    )) as Record<string, unknown>;
    expect(out.cacheScope).toBe('private');
    expect(out.resultType).toBe('complete');
  });

  it('a list the guard does not filter, or one without cacheScope, is passed as the server said it', async () => {
    const given = { tools, ttlMs: 60_000, cacheScope: 'public' };
    expect(await surface().filterList(given, false, {})).toEqual(given);
    const legacy = (await surface({ pin: true }).filterList({ tools }, false, {})) as Record<string, unknown>;
    expect('cacheScope' in legacy).toBe(false);
  });

  it('remembers which listed tools have an outputSchema', async () => {
    const s = surface();
    await s.filterList({ tools }, false, {});
    expect([s.hasOutputSchema('customer'), s.hasOutputSchema('lookup_order')]).toEqual([true, false]);
  });
});
