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
//
// Revision 2026-07-28 (the 2.x SDK) is stateless over HTTP: `serveOverStdioModern` classifies each POST with
// the 2.x SDK's `classifyInboundRequest` (its own rejections answered as the SDK answers them), spawns the
// server for that one exchange (on stdio the opening message selects the era) and relays through a
// `PerRequestHTTPServerTransport`, where every message the server sends before its answer belongs to the one
// request. The front serves 2026-07-28 only (a 2025-era request or a GET is refused, as a modern-only
// `createMcpHandler` refuses it); the checks the 2.x `createMcpHandler` makes that need the server object
// (a tool's `x-mcp-header` declarations, required client capabilities, standard header validation) are the
// server's own over HTTP and are not made by this front.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { classifyInboundRequest, PerRequestHTTPServerTransport } from '@modelcontextprotocol/server';

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

/** A JSON-RPC error as the 2.x SDK's HTTP entry answers it. */
function writeError(res, status, code, message, data, id = null) {
  res.writeHead(status, { 'content-type': 'application/json', ...(status === 405 && { allow: 'POST' }) });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message, ...(data !== undefined && { data }) }, id }));
}

/** One 2026-07-28 exchange: the server spawned for it, `message` relayed, its HTTP response written. */
async function exchange(command, args, stderr, classification, message, res) {
  const child = new StdioClientTransport({ command, args, stderr });
  const front = new PerRequestHTTPServerTransport({ classification });
  const fail = (error) => {
    if (stderr !== 'ignore') console.error('mcp-stdio-bridge:', error);
  };
  front.onmessage = (m) => child.send(m).catch(fail);
  // The one exchange is the request: whatever the server sends before its answer belongs to it.
  const relatedRequestId = 'id' in message ? message.id : undefined;
  child.onmessage = (m) => front.send(m, { relatedRequestId }).catch(fail);
  front.onclose = () => child.close();
  child.onclose = () => front.close();
  front.onerror = fail;
  child.onerror = fail;
  await child.start();
  await front.start();
  try {
    const response = await front.handleMessage(message);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (response.body) for await (const chunk of response.body) res.write(chunk);
    res.end();
  } finally {
    await child.close();
  }
}

/**
 * Serves the stdio MCP server `command args` to 2026-07-28 clients over stateless Streamable HTTP on
 * 127.0.0.1: one child process per HTTP request. Options and result as {@link serveOverStdio}.
 */
export async function serveOverStdioModern(command, args, { stderr = 'ignore' } = {}) {
  const http = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    if (req.method !== 'POST') return writeError(res, 405, -32000, 'Method not allowed.');
    let body;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return writeError(res, 400, -32700, 'Parse error: the request body is not valid JSON');
    }
    const header = (name) => (typeof req.headers[name] === 'string' ? req.headers[name] : undefined);
    const outcome = classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: header('mcp-protocol-version'),
      mcpMethodHeader: header('mcp-method'),
      mcpNameHeader: header('mcp-name'),
      body,
    });
    const id = typeof body?.method === 'string' && body.id !== undefined ? body.id : null;
    if (outcome.kind === 'reject')
      return writeError(res, outcome.httpStatus, outcome.code, outcome.message, outcome.data, id);
    if (outcome.kind === 'legacy')
      return writeError(res, 400, -32600, 'This endpoint serves 2026-07-28 only', undefined, id);
    try {
      await exchange(command, args, stderr, outcome.classification, outcome.message, res);
    } catch (error) {
      if (stderr !== 'ignore') console.error('mcp-stdio-bridge:', error);
      if (!res.headersSent) writeError(res, 500, -32603, 'Internal server error', undefined, id);
      else res.end();
    }
  });
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${http.address().port}/mcp`,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}
