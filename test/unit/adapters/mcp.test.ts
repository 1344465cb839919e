/**
 * agent-pep/mcp setup rules: what guardMcpServer and guardMcpClient refuse at the call that guards
 * (a TypeError, with `err.option` for a bad option), before any tool can run unguarded. No network:
 * the Peps here are never asked.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { guardMcpClient, guardMcpServer, PERMIT_META_KEY } from '../../../src/adapters/mcp.js';
import { createPep, createPermitVerifier, type Pep } from '../../../src/index.js';
import { createTestIssuer } from '../../support/permits.js';

const base = { pdpUrl: 'http://127.0.0.1:9', agentId: 'support-ai', session: 's' };
const withPermits = (): Pep => createPep({ ...base, permits: { keys: 'http://127.0.0.1:9/jwks', issuer: 'x' } });
const server = (): McpServer => new McpServer({ name: 's', version: '1' });
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
    expect(typeErrorOf(() => guardMcpServer(withPermits(), server(), { verifer: {} } as never)).option).toBe('verifer');
  });

  it('a verifier that is not a PermitVerifier is a TypeError naming verifier', () => {
    expect(typeErrorOf(() => guardMcpServer(withPermits(), server(), { verifier: {} as never })).option).toBe(
      'verifier',
    );
  });

  it('without a verifier, a Pep that cannot guard tools (no permits configured) is a TypeError', () => {
    typeErrorOf(() => guardMcpServer(createPep(base), server()));
  });

  it('with a verifier, the Pep needs no permits of its own', async () => {
    const issuer = await createTestIssuer();
    const verifier = createPermitVerifier({ keys: issuer.jwks, issuer: issuer.issuer, audience: 'payments-service' });
    expect(guardMcpServer(createPep(base), server(), { verifier })).toBeInstanceOf(McpServer);
  });

  it('something that is not an McpServer 1.x, or not a Pep, is a TypeError', () => {
    typeErrorOf(() => guardMcpServer(withPermits(), {} as never));
    typeErrorOf(() => guardMcpServer(withPermits(), client() as never));
    typeErrorOf(() => guardMcpServer({} as never, server()));
  });

  it('guarding the same server twice is a TypeError', () => {
    const s = server();
    guardMcpServer(withPermits(), s);
    typeErrorOf(() => guardMcpServer(withPermits(), s));
  });

  it('the guard cannot be undone by replacing a registration method, a tool handler accessor or update', () => {
    const s = server();
    guardMcpServer(withPermits(), s);
    const tool = s.registerTool('lookup_order', {}, async () => ({ content: [] }));
    expect(() => Object.defineProperty(tool, 'handler', { value: () => undefined })).toThrow(TypeError);
    expect(() => Object.defineProperty(tool, 'update', { value: () => undefined })).toThrow(TypeError);
    expect(() => Object.defineProperty(s, 'registerTool', { value: () => undefined })).toThrow(TypeError);
    expect(() => Object.defineProperty(s.server, 'setRequestHandler', { value: () => undefined })).toThrow(TypeError);
  });

  it('a server that already has tools is guarded (on its transport); a raw low-level tools/call handler is a TypeError', () => {
    const s = server();
    s.registerTool('lookup_order', {}, async () => ({ content: [] }));
    expect(guardMcpServer(withPermits(), s)).toBe(s);
    const raw = server();
    raw.server.registerCapabilities({ tools: {} });
    raw.server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [] }));
    expect(typeErrorOf(() => guardMcpServer(withPermits(), raw)).message).toMatch(/tools\/call handler of its own/);
  });

  it('a transport whose onmessage cannot be redefined is a TypeError naming why, at connect', async () => {
    const s = server();
    s.registerTool('lookup_order', {}, async () => ({ content: [] }));
    guardMcpServer(withPermits(), s);
    const fixed = { start: async () => undefined, send: async () => undefined, close: async () => undefined };
    Object.defineProperty(fixed, 'onmessage', { value: undefined, writable: true, configurable: false });
    await expect(s.connect(fixed)).rejects.toThrow(/transport cannot be guarded/);
  });

  it('hideBlocked must be a boolean', () => {
    expect(typeErrorOf(() => guardMcpServer(withPermits(), server(), { hideBlocked: 'no' as never })).option).toBe(
      'hideBlocked',
    );
  });

  it('a requestStateKey under 32 bytes, or a requestStateTtlMs that is not 1 to 86400000 ms, is a TypeError naming it', () => {
    const bad = [
      [{ requestStateKey: new Uint8Array(31) }, 'requestStateKey'],
      [{ requestStateKey: 'secret' as never }, 'requestStateKey'],
      [{ requestStateTtlMs: 0 }, 'requestStateTtlMs'],
      [{ requestStateTtlMs: 86_400_001 }, 'requestStateTtlMs'],
      [{ requestStateTtlMs: 1.5 }, 'requestStateTtlMs'],
    ] as const;
    for (const [opts, option] of bad)
      expect(typeErrorOf(() => guardMcpServer(withPermits(), server(), opts)).option).toBe(option);
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
