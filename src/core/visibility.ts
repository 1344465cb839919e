/**
 * `pep.visibleTools`: which of a list of tools this agent and session may be offered, in one batch of
 * simulated action decisions with `purpose: 'visibility'` (docs/visibility.md). Fails closed: a tool
 * whose decision is anything but a decision other than BLOCK is hidden; this module never rejects.
 * @internal
 */
import type { PolicyDecision } from '../decision.js';
import { randomUUID } from '../internal/runtime.js';
import type { ActionCall } from '../options/pep.js';
import type { VisibilityBatch } from '../wire/agent-pep.js';
import { isAbortSignal, isSessionId } from './request.js';

/** Per-call options of {@link Pep.visibleTools}. */
export interface VisibleToolsOptions {
  /** Aborting hides every tool not decided yet (their decisions are BLOCK `aborted`). */
  signal?: AbortSignal | undefined;
  /** Session for this check only (non-empty); defaults to the client's. */
  session?: string | undefined;
}

/** What a visibility batch asks of the client: its calls decided together, within one deadline. */
export interface VisibilityCallContext {
  signal: AbortSignal | undefined;
  session: string | undefined;
  purpose: 'visibility';
  visibilityBatch: VisibilityBatch;
}

/** The batch machinery of `authorizeActions`, with the visibility tag on every request. */
export type DecideVisibility = (calls: readonly ActionCall[], call: VisibilityCallContext) => Promise<PolicyDecision[]>;

const KNOWN: ReadonlySet<string> = new Set(['signal', 'session']);

/** The options, checked strictly (an unknown key is refused), or undefined when they are not valid. */
function readOptions(raw: unknown): { signal: AbortSignal | undefined; session: string | undefined } | undefined {
  if (raw === undefined) return { signal: undefined, session: undefined };
  if (typeof raw !== 'object' || raw === null) return undefined;
  for (const key of Object.keys(raw)) if (!KNOWN.has(key)) return undefined;
  const { signal, session } = raw as VisibleToolsOptions;
  if (signal !== undefined && !isAbortSignal(signal)) return undefined;
  if (session !== undefined && !isSessionId(session)) return undefined;
  return { signal, session };
}

/**
 * Resolves the names, as given and in the order given, whose visibility decision is not BLOCK.
 * @param names - tool names as the host knows them; a non-array (or an empty one) resolves `[]` without asking
 * @param rawOpts - `{ signal?, session? }`; any other key, or a bad value, hides every tool (resolves `[]`)
 * @param decide - the client's batch machinery
 * @returns the visible names; never rejects (a failure of any kind hides every tool it touches)
 */
export async function visibleTools(names: unknown, rawOpts: unknown, decide: DecideVisibility): Promise<string[]> {
  try {
    if (!Array.isArray(names)) return [];
    const list: unknown[] = Array.from(names as unknown[]);
    if (list.length === 0) return [];
    const o = readOptions(rawOpts);
    if (o === undefined) return [];
    const calls = list.map((tool) => ({ tool, args: {} }) as ActionCall);
    const decisions = await decide(calls, {
      signal: o.signal,
      session: o.session,
      purpose: 'visibility',
      visibilityBatch: { id: randomUUID(), size: calls.length },
    });
    if (!Array.isArray(decisions) || decisions.length !== list.length) return [];
    const out: string[] = [];
    for (let i = 0; i < list.length; i++) {
      const name = list[i];
      const d = decisions[i];
      if (typeof name === 'string' && d !== undefined && d.verdict !== 'BLOCK' && d.stage === 'action') out.push(name);
    }
    return out;
  } catch {
    return [];
  }
}
