export { guardMcpClient } from './mcp/client.js';
export { PERMIT_META_KEY } from './mcp/common.js';
export { guardMcpServer } from './mcp/server.js';
