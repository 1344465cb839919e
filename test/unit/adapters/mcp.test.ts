/**
 * agent-pep/mcp setup rules: what guardMcpServer and guardMcpClient refuse at the call that guards
 * (a TypeError, with `err.option` for a bad option), before any tool can run unguarded. No network:
 * the Peps here are never asked.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { guardMcpClient, guardMcpServer, PERMIT_META_KEY } from '../../../src/adapters/mcp.js';
import { createPep, createPermitVerifier, type Pep } from '../../../src/index.js';
import { createTestIssuer } from '../../support/permits.js';

const base = { pdpUrl: 'http://127.0.0.1:9', agentId: 'support-ai', session: 's' };
const withPermits = (): Pep => createPep({ ...base, permits: { keys: 'http://127.0.0.1:9/jwks', issuer: 'x' } });
const handles = new WeakMap<McpServer, Record<string, RegisteredTool>>();
/** A 1.x server with one tool; its handle is in `toolsOf(server)`. */
const server = (): McpServer => {
  const s = new McpServer({ name: 's', version: '1' });
  handles.set(s, { lookup_order: s.registerTool('lookup_order', {}, async () => ({ content: [] })) });
  return s;
};
const toolsOf = (s: McpServer): Record<string, RegisteredTool> => handles.get(s) ?? {};
const client = (): Client => new Client({ name: 'c', version: '1' });
const transport = (): InMemoryTransport => InMemoryTransport.createLinkedPair()[0];

/** The TypeError `fn` throws, for its `option`. */
function typeErrorOf(fn: () => unknown): TypeError & { option?: string } {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TypeError);
    return err as TypeError & { option?: string };
  }
  throw new Error('expected a TypeError');
}

describe('guardMcpServer refuses what it cannot guard', () => {
  it('the permit travels under agent-pep/permit', () => {
    expect(PERMIT_META_KEY).toBe('agent-pep/permit');
  });

  it('an unknown option is a TypeError naming it (a misspelt verifier must never fall back to the PDP silently)', () => {
    const s = server();
    expect(
      typeErrorOf(() => guardMcpServer(withPermits(), s, { tools: toolsOf(s), verifer: {} } as never)).option,
    ).toBe('verifer');
  });

  it('a verifier that is not a PermitVerifier is a TypeError naming verifier', () => {
    const s = server();
    expect(
      typeErrorOf(() => guardMcpServer(withPermits(), s, { tools: toolsOf(s), verifier: {} as never })).option,
    ).toBe('verifier');
  });

  it('a 1.x McpServer without { tools } is a TypeError naming tools whose message says what to pass (the route that patched the SDK is gone)', () => {
    const err = typeErrorOf(() => guardMcpServer(withPermits(), server(), {}));
    expect(err.option).toBe('tools');
    expect(err.message).toContain('{ tools: { refund_payment: handle } }');
    expect(typeErrorOf(() => guardMcpServer(withPermits(), server(), undefined as never)).option).toBe('tools');
    expect(typeErrorOf(() => guardMcpServer(withPermits(), server(), { tools: [] as never })).option).toBe('tools');
  });

  it('without a verifier, a Pep that cannot guard tools (no permits configured) is a TypeError', () => {
    const s = server();
    typeErrorOf(() => guardMcpServer(createPep(base), s, { tools: toolsOf(s) }));
  });

  it('with a verifier, the Pep needs no permits of its own', async () => {
    const issuer = await createTestIssuer();
    const verifier = createPermitVerifier({ keys: issuer.jwks, issuer: issuer.issuer, audience: 'payments-service' });
    const s = server();
    expect(guardMcpServer(createPep(base), s, { tools: toolsOf(s), verifier })).toBeInstanceOf(McpServer);
  });

  it('something that is not an McpServer, or not a Pep, is a TypeError', () => {
    typeErrorOf(() => guardMcpServer(withPermits(), {} as never, { tools: {} }));
    typeErrorOf(() => guardMcpServer(withPermits(), client() as never, { tools: {} }));
    const s = server();
    typeErrorOf(() => guardMcpServer({} as never, s, { tools: toolsOf(s) }));
  });

  it('guarding the same server twice is a TypeError', () => {
    const s = server();
    guardMcpServer(withPermits(), s, { tools: toolsOf(s) });
    typeErrorOf(() => guardMcpServer(withPermits(), s, { tools: toolsOf(s) }));
  });

  it('toolHandlers is a TypeError naming it on an McpServer (it is for a 2.x low-level Server)', () => {
    const s = server();
    const opts = { tools: toolsOf(s), toolHandlers: { call: () => undefined } };
    expect(typeErrorOf(() => guardMcpServer(withPermits(), s, opts)).option).toBe('toolHandlers');
  });

  it('hideBlocked must be a boolean', () => {
    const s = server();
    expect(
      typeErrorOf(() => guardMcpServer(withPermits(), s, { tools: toolsOf(s), hideBlocked: 'no' as never })).option,
    ).toBe('hideBlocked');
  });

  it('a requestStateKey under 32 bytes, or a requestStateTtlMs that is not 1 to 86400000 ms, is a TypeError naming it', () => {
    const bad = [
      [{ requestStateKey: new Uint8Array(31) }, 'requestStateKey'],
      [{ requestStateKey: 'secret' as never }, 'requestStateKey'],
      [{ requestStateTtlMs: 0 }, 'requestStateTtlMs'],
      [{ requestStateTtlMs: 86_400_001 }, 'requestStateTtlMs'],
      [{ requestStateTtlMs: 1.5 }, 'requestStateTtlMs'],
    ] as const;
    for (const [opts, option] of bad) {
      const s = server();
      expect(typeErrorOf(() => guardMcpServer(withPermits(), s, { ...opts, tools: toolsOf(s) })).option).toBe(option);
    }
  });
});

describe('guardMcpClient refuses what it cannot guard', () => {
  it('an unknown option, or a checkResult that is not a boolean, is a TypeError naming it', () => {
    expect(typeErrorOf(() => guardMcpClient(withPermits(), transport(), { checkResults: false } as never)).option).toBe(
      'checkResults',
    );
    expect(typeErrorOf(() => guardMcpClient(withPermits(), transport(), { checkResult: 'no' as never })).option).toBe(
      'checkResult',
    );
  });

  it('a Pep that cannot guard tools, something that is not a Transport, and a second guard are TypeErrors', () => {
    typeErrorOf(() => guardMcpClient(createPep(base), transport()));
    typeErrorOf(() => guardMcpClient(withPermits(), server() as never));
    const t = transport();
    guardMcpClient(withPermits(), t);
    typeErrorOf(() => guardMcpClient(withPermits(), t));
  });

  it('a Client is a TypeError without an option: its transport is what is guarded (nothing of the Client changes)', () => {
    const c = client();
    const err = typeErrorOf(() => guardMcpClient(withPermits(), c as never));
    expect(err.option).toBeUndefined();
    expect(err.message).toContain('client.connect(guardMcpClient(pep, transport))');
    expect(Object.hasOwn(c, 'callTool') || Object.hasOwn(c, 'request') || Object.hasOwn(c, 'pepPins')).toBe(false);
  });
});
