// The MCP conformance suite's adapter to stdio. The suite (0.2.0-alpha.12) drives a server only by `--url`,
// over Streamable HTTP; this bridge lets it reach a server that speaks ONLY stdio. It is a Streamable HTTP
// front built from the 1.x SDK's own public transports: a stateful `StreamableHTTPServerTransport` per MCP
// session (one per `initialize`), and for each session the server spawned as a child process, reached with
// the SDK's `StdioClientTransport`. Every JSON-RPC message is relayed unchanged both ways (no id, params or
// result rewritten, nothing added or dropped): the message stream the server sees is the suite's.
//
// What cannot cross stdio, and what the bridge decides itself:
// - HTTP itself (headers, host checks, session ids, SSE streams) ends at the front: the suite's transport
//   checks (server-initialize's headers, session lifecycle, dns-rebinding-protection, multiple SSE streams)
//   test this front, the SDK's own transport, not the server behind it.
// - A message the server sends before it answers (a notification, or a request such as elicitation or
//   sampling) carries no link to the request it belongs to on stdio. The front must pick an SSE stream for
//   it: `notifications/progress` goes on the stream of the request whose `_meta.progressToken` it names;
//   any other message on the stream of the one request in flight, if exactly one is; else on the session's
//   standalone GET stream. The message itself is not changed.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

const isResponse = (message) => 'id' in message && !('method' in message);

/**
 * One MCP session: the HTTP front and the child it spawned, relaying both ways. `onsession(id, front)` is
 * called when the front has given the session its id. Resolves once the child has started.
 */
async function openSession(command, args, stderr, onsession) {
  const child = new StdioClientTransport({ command, args, stderr });
  const front = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => onsession(id, front),
  });
  /** The client's requests the server has not answered yet: id -> the progress token they carry. */
  const inFlight = new Map();
  const relatedTo = (message) => {
    if (isResponse(message)) return undefined; // the front routes a response by its own id
    if (message.method === 'notifications/progress') {
      for (const [id, token] of inFlight) if (token === message.params?.progressToken) return id;
    }
    return inFlight.size === 1 ? [...inFlight.keys()][0] : undefined;
  };
  const fail = (error) => {
    if (stderr !== 'ignore') console.error('mcp-stdio-bridge:', error);
  };
  front.onmessage = (message) => {
    if (isJSONRPCRequest(message)) inFlight.set(message.id, message.params?._meta?.progressToken);
    child.send(message).catch(fail);
  };
  child.onmessage = (message) => {
    const relatedRequestId = relatedTo(message);
    if (isResponse(message)) inFlight.delete(message.id);
    front.send(message, { relatedRequestId }).catch(fail);
  };
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await Promise.allSettled([front.close(), child.close()]);
  };
  front.onclose = close;
  child.onclose = close;
  front.onerror = fail;
  child.onerror = fail;
  await child.start();
  await front.start();
  return { front, close };
}

/**
 * Serves the stdio MCP server `command args` over Streamable HTTP on 127.0.0.1, one child process per MCP
 * session. `stderr`: the children's stderr ('ignore' by default; 'inherit' also prints relay errors).
 * Resolves with the endpoint's `url` and `close()` (ends every session and its child).
 */
export async function serveOverStdio(command, args, { stderr = 'ignore' } = {}) {
  const fronts = new Map();
  const sessions = new Set();
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    let body;
    try {
      body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
    } catch {
      body = Buffer.concat(chunks).toString('utf8'); // the front answers the parse error itself
    }
    const id = req.headers['mcp-session-id'];
    let front = typeof id === 'string' ? fronts.get(id) : undefined;
    if (!front && id === undefined && req.method === 'POST' && isInitializeRequest(body)) {
      const session = await openSession(command, args, stderr, (sid, f) => fronts.set(sid, f));
      sessions.add(session);
      front = session.front;
    }
    if (!front) {
      res.writeHead(id === undefined ? 400 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No valid session' }, id: null }));
      return;
    }
    await front.handleRequest(req, res, body);
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${http.address().port}/mcp`,
    close: async () => {
      await Promise.allSettled([...sessions].map((s) => s.close()));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
