// The small server the MCP conformance runs serve (scripts/mcp-conformance.js over Streamable HTTP, and
// scripts/mcp-conformance-stdio-server.js over stdio): the suite's tools, in two groups (registered before
// guarding, and after), and the 1.x `McpServer` built from them, bare or guarded.

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { McpServer as McpServerV2 } from '@modelcontextprotocol/server';
import { guardMcpServer } from 'agent-pep/mcp';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=';

/** The conformance tools, in two groups: registered before guarding, and after. */
export const BEFORE = {
  test_simple_text: async () => ({ content: [{ type: 'text', text: 'This is a simple text response for testing.' }] }),
  test_image_content: async () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }),
  test_error_handling: async () => {
    throw new Error('This tool intentionally returns an error for testing');
  },
};
export const AFTER = {
  test_audio_content: async () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }),
  test_embedded_resource: async () => ({
    content: [
      { type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'embedded' } },
    ],
  }),
  test_multiple_content_types: async () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PNG, mimeType: 'image/png' },
      { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'text/plain', text: 'r' } },
    ],
  }),
  test_tool_with_progress: async (extra) => {
    const token = extra._meta?.progressToken;
    for (const progress of [0, 50, 100]) {
      if (token !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress, total: 100 },
        });
      }
    }
    return { content: [{ type: 'text', text: 'progress done' }] };
  },
};

export function register(server, tools) {
  const handles = {};
  for (const [name, cb] of Object.entries(tools)) {
    handles[name] = server.registerTool(name, { description: `conformance tool ${name}` }, cb);
  }
  return handles;
}

/**
 * A 1.x server declared with `capabilities: { tools }`, guarded (or not) with the handles of its tools
 * (`{ tools }`, no SDK member replaced). `how` 'after': some tools registered before guarding, the others
 * after it, their handles added to the record the guard reads at each request; 'before': every tool
 * registered, then guarded. `session`: the policy session the guard decides in (the PDP's evidence is
 * counted by it).
 */
export function makeServer(pep, how = 'after', session = `conformance-${how}`) {
  const server = new McpServer({ name: 'agent-pep-conformance', version: '1.0.0' }, { capabilities: { tools: {} } });
  const tools = register(server, BEFORE);
  if (how === 'before') Object.assign(tools, register(server, AFTER));
  // The conformance client names no policy session: the server takes it from what it knows of its caller.
  if (pep) guardMcpServer(pep, server, { tools, session: () => session });
  if (how === 'after') Object.assign(tools, register(server, AFTER));
  return server;
}

/**
 * A 2.x `McpServer` (revision 2026-07-28) with the same tools but the progress one, registered at once;
 * guarded directly with the handles of its tools when a `pep` is given (policy session `session`).
 */
export function makeServerV2(pep, session = 'conformance') {
  const server = new McpServerV2(
    { name: 'agent-pep-conformance', version: '2.0.0' },
    { capabilities: { tools: { listChanged: true } } },
  );
  const { test_tool_with_progress: _progress, ...after } = AFTER;
  const tools = {};
  for (const [name, cb] of Object.entries({ ...BEFORE, ...after })) {
    tools[name] = server.registerTool(name, { description: `conformance tool ${name}` }, () => cb());
  }
  if (pep) guardMcpServer(pep, server, { tools, session: () => session });
  return server;
}
