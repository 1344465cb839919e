/**
 * The values of `@modelcontextprotocol/sdk` 1.x the guard needs (request schemas, the SDK's zod helpers),
 * loaded only when a 1.x object is guarded, so that `agent-pep/mcp` loads with only the 2.x packages
 * installed (CONTRACT section 16: both stacks are optional peers, chosen by the object given).
 * Loaded synchronously (`createRequire`: no top-level await, `guardMcpServer`/`guardMcpClient` stay
 * synchronous); the SDK takes these schemas structurally (method literal, parse), so the CommonJS
 * copy serves an ESM-loaded server or client. Internal to `agent-pep/mcp`.
 * @internal
 */
import { createRequire } from 'node:module';

type Types = typeof import('@modelcontextprotocol/sdk/types.js');
type ZodCompat = typeof import('@modelcontextprotocol/sdk/server/zod-compat.js');
type JsonSchemaCompat = typeof import('@modelcontextprotocol/sdk/server/zod-json-schema-compat.js');

/** What the 1.x route uses of the SDK. */
export interface SdkV1 {
  CallToolRequestSchema: Types['CallToolRequestSchema'];
  ListToolsRequestSchema: Types['ListToolsRequestSchema'];
  ListToolsResultSchema: Types['ListToolsResultSchema'];
  ToolListChangedNotificationSchema: Types['ToolListChangedNotificationSchema'];
  getParseErrorMessage: ZodCompat['getParseErrorMessage'];
  normalizeObjectSchema: ZodCompat['normalizeObjectSchema'];
  safeParseAsync: ZodCompat['safeParseAsync'];
  toJsonSchemaCompat: JsonSchemaCompat['toJsonSchemaCompat'];
}

let loaded: SdkV1 | undefined;

/**
 * The 1.x SDK's values, loaded at the first call (a 1.x object being guarded) and kept.
 * @throws TypeError when `@modelcontextprotocol/sdk` cannot be loaded (a 1.x object needs it installed)
 */
export function sdkV1(): SdkV1 {
  if (loaded !== undefined) return loaded;
  const require = createRequire(import.meta.url);
  let types: Types;
  let zod: ZodCompat;
  let json: JsonSchemaCompat;
  try {
    types = require('@modelcontextprotocol/sdk/types.js') as Types;
    zod = require('@modelcontextprotocol/sdk/server/zod-compat.js') as ZodCompat;
    json = require('@modelcontextprotocol/sdk/server/zod-json-schema-compat.js') as JsonSchemaCompat;
  } catch {
    throw new TypeError('agent-pep/mcp: a 1.x MCP object needs @modelcontextprotocol/sdk 1.x installed');
  }
  loaded = {
    CallToolRequestSchema: types.CallToolRequestSchema,
    ListToolsRequestSchema: types.ListToolsRequestSchema,
    ListToolsResultSchema: types.ListToolsResultSchema,
    ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
    getParseErrorMessage: zod.getParseErrorMessage,
    normalizeObjectSchema: zod.normalizeObjectSchema,
    safeParseAsync: zod.safeParseAsync,
    toJsonSchemaCompat: json.toJsonSchemaCompat,
  };
  return loaded;
}
