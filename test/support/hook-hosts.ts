/**
 * What the hook tests of every host share: the recorded events (test/fixtures/hooks/), the policy they
 * are decided by, a PDP that accepts connections and never answers, and a port nothing listens on.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { ROOT } from './processes.js';

export type Json = Record<string, unknown>;

/** A recorded hook event. */
export function hookFixture(name: string): Json {
  return JSON.parse(readFileSync(join(ROOT, 'test/fixtures/hooks', `${name}.json`), 'utf8')) as Json;
}

/** The policy of the multi-host tests (tools as each host names them). */
export const HOSTS_POLICY = hookFixture('hosts-policy');

/** A port nothing listens on: bound, noted, closed. */
export async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((r) => probe.close(() => r()));
  return port;
}

/** A PDP that accepts connections and never answers. */
export async function hungPdp(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** One recorded event of each host, with the deny each gives for the call it makes. */
export const HOST_CASES = [
  {
    host: 'claude-code',
    fixture: 'claude-code-pre-tool-use-bash',
    deny: { hookSpecificOutput: { permissionDecision: 'deny' } },
  },
  { host: 'codex', fixture: 'codex-pre-tool-use-bash', deny: { hookSpecificOutput: { permissionDecision: 'deny' } } },
  { host: 'cursor', fixture: 'cursor-before-shell-execution', deny: { permission: 'deny' } },
  { host: 'gemini-cli', fixture: 'gemini-cli-before-tool-shell', deny: { decision: 'deny' } },
  { host: 'copilot-cli', fixture: 'copilot-cli-pre-tool-use-bash', deny: { permissionDecision: 'deny' } },
] as const;
