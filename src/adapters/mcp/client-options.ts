/**
 * The options of `guardMcpClient`, read once and checked in order (a TypeError with `err.option` for a bad
 * one). Internal to `agent-pep/mcp`.
 * @internal
 */
import { isSessionId } from '../../internal/guards.js';
import { optionError, refuseUnknownKeys } from '../../options/kit.js';
import { isObject } from './common.js';
import { type McpPinSet, readPinSet } from './pins.js';

/** Options of `guardMcpClient`. */
export interface GuardMcpClientOptions {
  /**
   * Check each tool result at `context_egress` (with the tool's name) before the caller sees it:
   * ALLOW returns it as it is, WARN replaces its text with the PDP's `transformedContent`, BLOCK or
   * ESCALATE withholds it (an `isError` result with the `toolMessage`). @defaultValue true
   */
  checkResult?: boolean | undefined;
  /**
   * Filter what `listTools` (any `tools/list`) returns to the tools `pep.visibleTools` shows for the
   * session: a tool the policy blocks outright is never offered to the model (docs/visibility.md). A
   * hidden tool called anyway is still decided per call. @defaultValue true
   */
  hideBlocked?: boolean | undefined;
  /**
   * Pin the tool definitions (docs/visibility.md): `true` takes the pins at the first `tools/list`; a pin
   * set (from `pepPins()` or `agent-pep pin mcp`) starts from those. A tool whose definition differs from
   * its pin, or that was not pinned, is hidden, and a call to it is a synthesized BLOCK `tool_changed`.
   * @defaultValue undefined (no pinning)
   */
  pin?: true | McpPinSet | undefined;
  /** With `pin`: offer (and pin at first sight) a tool that was not pinned, instead of hiding it. @defaultValue false */
  allowNew?: boolean | undefined;
  /**
   * The policy session every call of this client is decided in, and sent to the server in
   * `params._meta['agent-pep/session']`. Nothing a server sends (`Mcp-Session-Id`, `_meta` of a response)
   * changes it (CONTRACT section 16). @defaultValue the Pep's own session (`createPep({ session })`,
   * `pep.withSession(id)`)
   */
  session?: string | undefined;
}

/** The options as read. */
export interface ClientOptions {
  checkResult: boolean;
  session: string | undefined;
  hideBlocked: boolean;
  pin: McpPinSet | true | undefined;
  allowNew: boolean;
}

const CLIENT_OPTIONS: ReadonlySet<string> = new Set(['checkResult', 'hideBlocked', 'pin', 'allowNew', 'session']);

/** The options of `guardMcpClient`, checked in order. @throws TypeError with `err.option` */
export function readClientOptions(scope: string, opts: GuardMcpClientOptions | undefined): ClientOptions {
  const rawOpts: unknown = opts;
  if (rawOpts !== undefined && !isObject(rawOpts)) optionError(scope, 'opts', 'expected an object');
  if (rawOpts !== undefined) refuseUnknownKeys(scope, rawOpts, CLIENT_OPTIONS);
  const checkResult: unknown = opts?.checkResult ?? true;
  if (typeof checkResult !== 'boolean') optionError(scope, 'checkResult', 'expected a boolean');
  const session: unknown = opts?.session;
  if (session !== undefined && !isSessionId(session)) optionError(scope, 'session', 'expected a non-empty string');
  return {
    checkResult: checkResult as boolean,
    session: session as string | undefined,
    ...readSurfaceOptions(scope, opts),
  };
}

/** `hideBlocked`, `pin` and `allowNew`, checked. @throws TypeError with `err.option` */
function readSurfaceOptions(
  scope: string,
  opts: GuardMcpClientOptions | undefined,
): { hideBlocked: boolean; pin: McpPinSet | true | undefined; allowNew: boolean } {
  const hideBlocked: unknown = opts?.hideBlocked ?? true;
  if (typeof hideBlocked !== 'boolean') optionError(scope, 'hideBlocked', 'expected a boolean');
  const allowNew: unknown = opts?.allowNew ?? false;
  if (typeof allowNew !== 'boolean') optionError(scope, 'allowNew', 'expected a boolean');
  const given: unknown = opts?.pin;
  const pin = given === undefined || given === true ? given : readPinSet(scope, given);
  if (allowNew === true && pin === undefined) optionError(scope, 'allowNew', 'allowNew needs pin');
  return { hideBlocked: hideBlocked as boolean, pin, allowNew: allowNew as boolean };
}
