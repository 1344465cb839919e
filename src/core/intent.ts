/**
 * The `intent` call option of `checkInput` (docs/dev-pdp.md, "Intent grants"): the grants an
 * application's own extractor proposed, checked for shape here (the PDP checks them again, against its
 * policy's groups) and copied once, so nothing the caller changes later reaches the request.
 * @internal
 */
import type { IntentGrant } from '../decision.js';
import { isRecord } from '../internal/guards.js';

/** Most grants one `intent` may carry (as the dev PDP). */
const MAX_GRANTS = 16;
const ID = /^[A-Za-z0-9_.:-]{1,64}$/;
const TOOL = /^([a-z0-9*]+(_[a-z0-9*]+)*|@[A-Za-z0-9_.:-]{1,64})$/;
const GRANT_KEYS: ReadonlySet<string> = new Set(['id', 'tools', 'args', 'uses', 'expiresInSec']);
const NUMBER_OPS: ReadonlySet<string> = new Set(['lte', 'gte', 'lt', 'gt']);
const isScalar = (v: unknown) =>
  v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

function constraintOk(c: unknown): boolean {
  if (!isRecord(c)) return false;
  const keys = Object.keys(c);
  if (keys.length !== 1) return false;
  const op = keys[0] as string;
  const v = c[op];
  if (op === 'eq') return isScalar(v);
  if (op === 'in') return Array.isArray(v) && v.length > 0 && v.length <= 100 && v.every(isScalar);
  if (NUMBER_OPS.has(op)) return typeof v === 'number' && Number.isFinite(v);
  if (op === 'matches') return typeof v === 'string' && v.length <= 4096;
  return op === 'fromUser' && v === true;
}

const positiveInt = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 1;

/** The problem with one grant, or undefined. */
function grantProblem(g: unknown): string | undefined {
  if (!isRecord(g)) return 'is not an object';
  for (const key of Object.keys(g)) if (!GRANT_KEYS.has(key)) return 'has an unknown field';
  if (typeof g.id !== 'string' || !ID.test(g.id)) return 'needs an id of 1-64 characters from A-Z a-z 0-9 _ . : -';
  const tools = Array.isArray(g.tools) ? g.tools : [g.tools];
  if (tools.length === 0 || !tools.every((t) => typeof t === 'string' && TOOL.test(t)))
    return 'needs tools: a normalized tool pattern, @group, or a list of them';
  if (g.args !== undefined) {
    if (!isRecord(g.args)) return 'has args that are not an object';
    for (const [path, c] of Object.entries(g.args)) {
      if (!/^[^.]+(\.[^.]+)*$/.test(path) || !constraintOk(c)) return 'has a constraint that is not one operator';
    }
  }
  if (g.uses !== undefined && !positiveInt(g.uses)) return 'has uses that are not a positive integer';
  if (g.expiresInSec !== undefined && !positiveInt(g.expiresInSec))
    return 'has expiresInSec that is not a positive integer';
  return undefined;
}

/**
 * Checks `intent` and copies it.
 * @returns the copy, or what is wrong (naming the first grant at fault, never a value)
 */
export function readIntent(raw: unknown): { ok: true; intent: IntentGrant[] } | { ok: false; problem: string } {
  if (!Array.isArray(raw) || raw.length > MAX_GRANTS) {
    return { ok: false, problem: `intent must be a list of at most ${MAX_GRANTS} grants` };
  }
  for (let i = 0; i < raw.length; i++) {
    const problem = grantProblem(raw[i]);
    if (problem !== undefined) return { ok: false, problem: `intent[${i}] ${problem}` };
  }
  return { ok: true, intent: structuredClone(raw) as IntentGrant[] };
}
