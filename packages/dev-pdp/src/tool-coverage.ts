/**
 * Which latches can match the agent's tools, and which tools a latch covers (docs/dev-pdp.md, "Known
 * tools"): a policy that names `delete_files` when the agent has `delete_file` loads, and without a
 * `default` the real tool is ALLOWed. Given the tools the agent has, this lists the latches whose `tool`
 * can never match one of them, and the tools no latch covers.
 * @packageDocumentation
 */
import { normalizeToolName } from 'agent-pep/internal';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import { type CompiledPolicy, InvalidPolicyError, type PolicyIssue } from './policy.js';

/** A latch whose `tool` matches none of the known tools. */
export interface UnmatchedLatch {
  /** The latch's id. */
  latch: string;
  /** Its index in `latches`. */
  index: number;
  /** Its `tool` as written (a glob or `@group`). */
  tool: string;
}

/** What {@link checkToolCoverage} finds. */
export interface ToolCoverage {
  /**
   * The latches (enforced or audit, on any stage) with a `tool` that matches none of the known tools,
   * in policy order: a typo, or a tool the agent does not have. Such a latch never engages.
   */
  unmatched: UnmatchedLatch[];
  /**
   * The known tools (normalized, in the order given, each once) that no latch covers. A latch covers a
   * tool when it is enforced (not `mode: "audit"`), has the action stage, and its `tool` (glob or
   * `@group`) matches the tool's normalized name. A latch without `tool` applies to every tool but
   * covers none: it names no tool. Such a tool is decided by the action stage's `default` (ALLOW unless
   * the policy says BLOCK) and by latches without `tool`.
   */
  uncovered: string[];
}

/**
 * Normalizes the known tool names.
 * @throws TypeError with `option: 'knownTools'` for a list that is not of strings, a name longer than
 *   256 characters or one that normalizes to nothing
 */
export function normalizeKnownTools(tools: unknown): string[] {
  const fail = (why: string): never => {
    throw Object.assign(new TypeError(`startDevPdp: knownTools ${why}`), { option: 'knownTools' });
  };
  if (!Array.isArray(tools)) return fail('must be an array of tool names');
  const out: string[] = [];
  for (const tool of tools) {
    if (typeof tool !== 'string' || tool.length > DEV_PDP_DEFAULTS.maxToolNameLength) {
      return fail(`must be tool names of at most ${DEV_PDP_DEFAULTS.maxToolNameLength} characters`);
    }
    let name: string;
    try {
      name = normalizeToolName(tool);
    } catch {
      return fail('holds a name that normalizes to nothing');
    }
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/**
 * Checks a compiled policy against the tools the agent has.
 * @param policy - from `compilePolicy`
 * @param knownTools - the agent's tool names, as registered (normalized here)
 * @returns the latches that can never match a known tool, and the known tools no latch covers
 * @throws TypeError (`option: 'knownTools'`) for names that are not tool names
 */
export function checkToolCoverage(policy: CompiledPolicy, knownTools: readonly string[]): ToolCoverage {
  const tools = normalizeKnownTools(knownTools);
  const unmatched: UnmatchedLatch[] = [];
  policy.latches.forEach((latch, index) => {
    if (latch.tool === undefined) return;
    const matcher = latch.tool;
    if (!tools.some((tool) => matcher.test(tool))) unmatched.push({ latch: latch.id, index, tool: matcher.source });
  });
  const uncovered = tools.filter(
    (tool) =>
      !policy.latches.some((latch) => !latch.audit && latch.stages.has('action') && latch.tool?.test(tool) === true),
  );
  return { unmatched, uncovered };
}

/**
 * The issues of the latches that can never match a known tool, as `startDevPdp({ knownTools })` refuses
 * them.
 * @throws InvalidPolicyError listing each such latch at `latches[i].tool`, when there is one
 */
export function refuseUnmatchedLatches(coverage: ToolCoverage): void {
  if (coverage.unmatched.length === 0) return;
  const issues: PolicyIssue[] = coverage.unmatched.map((u) => ({
    path: `latches[${u.index}].tool`,
    message: `${u.tool} matches none of the known tools (knownTools): a typo, or a tool the agent does not have`,
    latch: u.latch,
  }));
  throw new InvalidPolicyError(issues);
}
