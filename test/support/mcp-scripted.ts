/**
 * A scripted MCP server for the client guard's wire tests: raw JSON-RPC on the 1.x SDK's in-memory pair,
 * answering `initialize` itself and handing every other message to the test, which answers what it likes
 * (ids, shapes and errors a real server would not send).
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** A JSON-RPC message as the scripted server reads it. */
export type Msg = Record<string, unknown> & { id?: string | number; method?: string; params?: Record<string, unknown> };

/** Sends a JSON-RPC message (`jsonrpc` added) to the client. */
export type Reply = (m: Record<string, unknown>) => void;

/**
 * Starts a scripted server: `initialize` is answered (tools capability, the client's protocol version), any
 * other message goes to `onMessage`.
 * @returns the client's side of the pair (to guard and connect), every message received, and `reply`
 */
export async function scripted(onMessage: (m: Msg, reply: Reply) => void) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const received: Msg[] = [];
  const reply: Reply = (m) => void serverSide.send({ jsonrpc: '2.0', ...m } as JSONRPCMessage).catch(() => undefined);
  serverSide.onmessage = (message) => {
    const m = message as Msg;
    received.push(m);
    if (m.method === 'initialize') {
      const serverInfo = { name: 'scripted', version: '1.0.0' };
      reply({
        id: m.id,
        result: { protocolVersion: m.params?.protocolVersion, capabilities: { tools: {} }, serverInfo },
      });
    } else onMessage(m, reply);
  };
  await serverSide.start();
  return { clientSide, received, reply };
}

/** The `tools/call` requests among `received`. */
export const callsIn = (received: Msg[]): Msg[] => received.filter((m) => m.method === 'tools/call');

/** Resolves after `ms` milliseconds. */
export const tick = (ms: number): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, ms));
