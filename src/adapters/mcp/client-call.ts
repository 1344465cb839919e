/**
 * What both routes of `guardMcpClient` (the transport, and the client's methods) do to one `tools/call`
 * before it is decided and sent: its params read once, the args its tool will run with, and the params
 * that travel (the effective args, the permit and the session in `_meta`). Internal to `agent-pep/mcp`.
 * @internal
 */
import type { Pep } from '../../pep.js';
import { argsBySchema, enforcementOf } from '../kit.js';
import { isObject, PERMIT_META_KEY, refusal, SESSION_META_KEY, type ToolResult } from './common.js';
import type { ToolSurface } from './surface.js';

/** The params of a `tools/call`, each member read once: what is decided is what is sent (a getter cannot answer differently later). */
export function readParams(given: unknown): Record<string, unknown> {
  try {
    return isObject(given) ? { ...given } : {};
  } catch {
    return {};
  }
}

/**
 * The args of a `tools/call` as the server's tool will run them (docs/adapters.md "Schemas"): by the
 * `inputSchema` it lists, or as sent when it lists none. A schema that cannot be read, or args that do
 * not fit it, are an `invalid_request` refusal, observed like the PDP's decisions.
 */
export async function argsByListedSchema(
  pep: Pep,
  surface: ToolSurface,
  name: string,
  given: unknown,
  options: unknown,
): Promise<{ kind: 'args'; args: unknown } | { kind: 'refused'; result: ToolResult }> {
  if (!isObject(given)) return { kind: 'args', args: given };
  const refuse = (why: string) => ({
    kind: 'refused' as const,
    result: refusal(
      enforcementOf(pep, 'guardMcpClient').refuse({ stage: 'action', tool: name }, 'invalid_request', why).toolMessage,
    ),
  });
  let schema: unknown;
  try {
    schema = await surface.inputSchemaOf(name, options);
  } catch {
    return refuse("the server's tool list could not be read to apply the tool's input schema");
  }
  const planned = argsBySchema(schema, given);
  return planned.kind === 'args' ? planned : refuse(planned.why);
}

/**
 * The params to send: the effective args, and in `_meta` the session the call was decided in and only
 * the permit the PDP minted for this call (a caller's own values under those keys never travel).
 */
export function withPermit(
  params: Record<string, unknown>,
  effective: Record<string, unknown>,
  permitId: string | undefined,
  session: string,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...params, arguments: effective };
  const meta: Record<string, unknown> = { ...(isObject(params._meta) ? params._meta : {}) };
  delete meta[PERMIT_META_KEY];
  if (permitId !== undefined) meta[PERMIT_META_KEY] = permitId;
  meta[SESSION_META_KEY] = session;
  out._meta = meta;
  return out;
}
