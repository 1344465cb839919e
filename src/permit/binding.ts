/**
 * What binds a permit to one action: the normalized `tool` and the `act_hash` of the args
 * (docs/permits.md), and, on the client, the agent (`sub`) and session (`sid`) it was asked for
 * (docs/permits.md).
 * @internal
 */
import { snapshotJsonObject } from '../internal/json.js';
import { normalizeToolName } from '../internal/tool-name.js';
import type { PermitClaims } from './claims.js';
import { decodeJsonObject } from './decode.js';
import { actionHashOfCanonical, actionHashOfSnapshot } from './hash.js';
import { refuse } from './refuse.js';

/** The action a permit must be bound to, computed once when verification starts. */
export interface ActionBinding {
  /** `normalizeToolName(tool)`, or undefined when it normalizes to nothing. */
  tool: string | undefined;
  toolError: unknown;
  /** `actionHash(tool, args)`, or undefined when the args are not a plain object of JSON values. */
  hash: string | undefined;
  argsError: unknown;
}

/** Normalizes the tool and hashes a snapshot of the args now (before any await); never throws. */
export function bindAction(tool: unknown, args: unknown): ActionBinding {
  const b: ActionBinding = { tool: undefined, toolError: undefined, hash: undefined, argsError: undefined };
  try {
    b.tool = normalizeToolName(tool as string);
  } catch (e) {
    b.toolError = e;
  }
  try {
    const snapshot = snapshotJsonObject(args);
    if (b.tool !== undefined) b.hash = actionHashOfSnapshot(b.tool, snapshot);
  } catch (e) {
    b.argsError = e;
  }
  return b;
}

/**
 * {@link bindAction} for args whose `act_hash` this process already computed over exactly these args
 * (rule 5, {@link checkPermitBinding}): the tool is normalized again, the hash reused. @internal
 */
export function bindHashedAction(tool: unknown, hash: string): ActionBinding {
  const b: ActionBinding = { tool: undefined, toolError: undefined, hash: undefined, argsError: undefined };
  try {
    b.tool = normalizeToolName(tool as string);
  } catch (e) {
    b.toolError = e;
  }
  if (b.tool !== undefined) b.hash = hash;
  return b;
}

/**
 * Checks 13 and 14: the claims' `tool` and `act_hash` are the action's.
 * @throws PermitVerificationError `permit_tool_mismatch` or `permit_args_mismatch`
 */
export function checkActionBinding(claims: PermitClaims, binding: ActionBinding): void {
  if (binding.tool === undefined || claims.tool !== binding.tool) {
    throw refuse('permit_tool_mismatch', 'the permit is for another tool', binding.toolError);
  }
  if (binding.hash === undefined || claims.act_hash !== binding.hash) {
    throw refuse('permit_args_mismatch', 'the permit is for other arguments', binding.argsError);
  }
}

/** What the client asked about, for {@link permitBindingProblem}. */
export interface AskedAction {
  /** The normalized tool name sent. */
  tool: string;
  /** The args the tool will run with (a snapshot: `transformedArgs` or what was sent). */
  args: Record<string, unknown>;
  /** `canonicalSnapshotJson(args)` when the caller already wrote it (hashed instead of writing it again). */
  argsJson?: string | undefined;
  /** The agent id sent (expected `sub`). */
  agentId: string;
  /** The session sent (expected `sid`). */
  session: string;
}

/**
 * A permit that passed rule 5, with what rule 5 computed: its decoded (untrusted) payload and the
 * `act_hash` of `args` (that very object), for `guardTool`'s check to reuse instead of decoding and
 * hashing again. Never leaves the client's internals.
 * @internal
 */
export interface BoundPermit {
  readonly permit: string;
  /** `decodeJsonObject` of the payload segment: not verified. */
  readonly payload: Record<string, unknown>;
  /** The args snapshot hashed (compared by identity before reuse). */
  readonly args: Record<string, unknown>;
  /** `actionHashOfSnapshot(tool, args)`. */
  readonly actHash: string;
}

/**
 * Rule 5 (docs/fail-closed.md): the permit on an action decodes, without trust, to the tool, args,
 * agent and session asked about. The payload is decoded once; the signature is not checked here
 * (`guardTool` and the service verify it).
 * @returns what is wrong (for the `ambiguous_decision` message), else the {@link BoundPermit}
 */
export function checkPermitBinding(permit: string, asked: AskedAction): string | BoundPermit {
  // The payload segment of a compact JWS (exactly two dots), without splitting the whole permit.
  const first = permit.indexOf('.');
  const second = first < 0 ? -1 : permit.indexOf('.', first + 1);
  const claims =
    second > 0 && permit.indexOf('.', second + 1) < 0 ? decodeJsonObject(permit.slice(first + 1, second)) : undefined;
  if (claims === undefined) return 'the permit does not decode';
  if (claims.tool !== asked.tool) return 'the permit is for another tool';
  if (claims.sub !== asked.agentId) return 'the permit is for another agent';
  if (claims.sid !== asked.session) return 'the permit is for another session';
  const actHash =
    asked.argsJson !== undefined
      ? actionHashOfCanonical(asked.tool, asked.argsJson)
      : actionHashOfSnapshot(asked.tool, asked.args);
  if (claims.act_hash !== actHash) return 'the permit is for other args';
  return { permit, payload: claims, args: asked.args, actHash };
}

/**
 * {@link checkPermitBinding}, for its verdict only.
 * @returns undefined when it matches, else what is wrong (for the `ambiguous_decision` message)
 */
export function permitBindingProblem(permit: string, asked: AskedAction): string | undefined {
  const r = checkPermitBinding(permit, asked);
  return typeof r === 'string' ? r : undefined;
}
