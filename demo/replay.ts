/**
 * The demo's core: start the dev PDP with a policy (demo/policy.json by default) and the tool
 * service, replay every corpus case through its stage with the public API only (text through
 * `pep.guardText`, actions through a dispatcher of `pep.guardTool`-wrapped tools), then run the
 * fail-closed checks and verify the PDP's evidence chain. Returns the JSON result the CLI prints with
 * `--json`; prints nothing itself.
 * @module
 */
import { readFile } from 'node:fs/promises';
import {
  createPep,
  type DecisionEvent,
  type Interceptor,
  type Pep,
  type PolicyDecision,
  PolicyEnforcementError,
  type Stage,
  type TextStage,
  type Verdict,
  verifyEvidence,
} from 'agent-pep';
import { type DevPdp, startDevPdp } from 'agent-pep/dev-pdp';
import { type CorpusCase, LABELS, type Label, loadCorpus, STAGES, sampleCases } from './corpus.js';
import { createDispatcher } from './dispatcher.js';
import { type FailClosedCheck, runFailClosedChecks, type ToolCall } from './failclosed.js';
import type { HeldForReview } from './review.js';
import { startToolService, type ToolService } from './tool-service.js';

/**
 * The folder of the demo's data files: this folder when run from the sources, `demo/` when run from
 * the compiled copy in `build/demo/` (`npm run demo`).
 */
export const DEMO_DIR = new URL(import.meta.url.includes('/build/demo/') ? '../../demo/' : './', import.meta.url);
/** The default corpus and policy. */
export const DEFAULT_CORPUS = new URL('agent-traffic.jsonl', DEMO_DIR);
export const DEFAULT_POLICY = new URL('policy.json', DEMO_DIR);
/** The agent the demo speaks for (a policy must list it in its `agents`). */
export const AGENT_ID = 'support-ai';
/** The `aud` of the permits: the tool service. */
export const SERVICE_AUDIENCE = 'demo-tool-service';

/** Used for a fail-closed check when the replayed traffic has no case of its own to offer. */
const FALLBACK_TEXT = 'Hi, I need to change the delivery address of my order.';
const FALLBACK_CALL: ToolCall = { tool: 'get_order_details', args: { order_id: '#W0000000' } };

/** One line of the JSON `cases`. */
export interface CaseResult {
  id: string;
  stage: Stage;
  label: Label;
  verdict: Verdict;
  /** The synthesized (fail-closed) code, or null for a verdict the PDP gave. */
  code: string | null;
  /** Every engaged latch id. */
  latches: string[];
  /** A tool ran (action cases only; always false for text). */
  executed: boolean;
}

/** A case result with what the per-case lines show (`content` is the original text: print it sanitized). */
export interface CaseRow extends CaseResult {
  tool?: string;
  content?: string;
  decidingLatch: string | null;
  redacted: boolean;
}

type VerdictCounts = Record<Verdict, number>;
/** Counts of one label at one stage: `total` and one count per outcome. */
type OutcomeCounts = { total: number } & Record<string, number>;

/** The counts by stage, by verdict and by label. */
export interface Counts {
  total: number;
  executed: number;
  byStage: Record<Stage, { total: number } & VerdictCounts>;
  byVerdict: VerdictCounts;
  byLabel: {
    attack: { total: number; stopped: number; missed: number; byStage: Partial<Record<Stage, OutcomeCounts>> };
    benign: { total: number; passed: number; stopped: number; byStage: Partial<Record<Stage, OutcomeCounts>> };
    sensitive: {
      total: number;
      redacted: number;
      blocked: number;
      passed: number;
      byStage: Partial<Record<Stage, OutcomeCounts>>;
    };
  };
}

/** The JSON `summary`. */
export interface DemoSummary extends Counts {
  /** Corpus lines skipped. */
  malformed: number;
  permits: { issued: number; verified: number; refused: Record<string, number> };
  /** Tool calls the demo's `trace-id` interceptor stamped before the PDP saw them. */
  interceptor: { name: string; stamped: number };
  evidence: { verified: boolean; records: number; firstBad?: number; reason?: string };
  replayMs: number;
  durationMs: number;
}

/** What `--json` prints. */
export interface DemoResult {
  cases: CaseResult[];
  summary: DemoSummary;
  failClosed: FailClosedCheck[];
}

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** JSON Lines corpus. @defaultValue demo/agent-traffic.jsonl */
  corpusPath?: string | URL;
  /** Dev PDP policy; it must list the agent `support-ai`. @defaultValue demo/policy.json */
  policyPath?: string | URL;
  /** Replay a deterministic sample of this many cases spanning every stage/label group. */
  sample?: number;
  /** Leave out every latch of the policy that adds this session label (`--without-wording`: `injected`). */
  withoutLabel?: string;
  /** Deadline of the fault-check client, in milliseconds. @defaultValue 500 */
  failClosedTimeoutMs?: number;
  /** Called after each case. */
  onCase?: (done: number, total: number, row: CaseRow) => void;
  /** Called for each skipped corpus line. */
  onMalformed?: (line: number, reason: string) => void;
  /** Called once the replay is over, before the fail-closed checks. */
  onReplayed?: () => void;
  /**
   * With `--review`: called with the result and the action calls the policy held for review
   * (demo/review.ts); runDemo resolves after it does.
   */
  review?: (result: DemoResult, held: HeldForReview) => Promise<void>;
}

/** The policy file cannot be used (unreadable, not JSON, refused by the dev PDP, or without the demo's agent). */
export class PolicyFileError extends Error {
  /** Stable code. */
  readonly code = 'policy_invalid';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PolicyFileError';
  }
}

/**
 * Starts the dev PDP on 127.0.0.1 with a policy read by {@link loadPolicy}.
 * @throws PolicyFileError when the dev PDP refuses the policy (its message names every problem)
 */
export async function startPolicyPdp(policy: object, policyPath: string | URL): Promise<DevPdp> {
  return startDevPdp({ policy, host: '127.0.0.1', port: 0, audience: SERVICE_AUDIENCE }).catch((cause: unknown) => {
    // The dev PDP names every problem of a policy it refuses (a TypeError), never its content.
    if (cause instanceof TypeError) throw new PolicyFileError(`${String(policyPath)}: ${cause.message}`, { cause });
    throw cause;
  });
}

/**
 * Reads a policy file and checks that it lists the demo's agent.
 * @throws PolicyFileError when it cannot be read, is not a JSON object, or does not list `support-ai`
 */
export async function loadPolicy(path: string | URL): Promise<{ agents?: unknown; latches?: unknown }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    const code = (cause as { code?: string }).code ?? 'error';
    throw new PolicyFileError(`cannot read the policy file ${String(path)} (${code})`, { cause });
  }
  let policy: unknown;
  try {
    policy = JSON.parse(text);
  } catch (cause) {
    const why = cause instanceof SyntaxError ? cause.message : 'not JSON';
    throw new PolicyFileError(`the policy file ${String(path)} is not JSON (${why})`, { cause });
  }
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) {
    throw new PolicyFileError(`the policy file ${String(path)} is not a JSON object`);
  }
  const { agents } = policy as { agents?: unknown };
  if (!Array.isArray(agents) || !agents.includes(AGENT_ID)) {
    throw new PolicyFileError(`the policy file ${String(path)} does not list the demo's agent "${AGENT_ID}"`);
  }
  return policy as { agents?: unknown; latches?: unknown };
}

/**
 * The policy without the latches that add `label` to the session (all of it when `label` is undefined):
 * how `--without-wording` measures the policy without its injection-wording latches, which carry the
 * label `injected`.
 */
export function withoutLatchesLabelled<P extends { latches?: unknown }>(policy: P, label: string | undefined): P {
  if (label === undefined || !Array.isArray(policy.latches)) return policy;
  const latches = (policy.latches as { labels?: unknown }[]).filter(
    (l) => !(Array.isArray(l.labels) && l.labels.includes(label)),
  );
  return { ...policy, latches };
}

/** Latch id to verdict, to name the latch that decided each case. */
export function latchVerdicts(policy: { latches?: unknown }): Map<string, string> {
  const latches = Array.isArray(policy.latches) ? (policy.latches as { id?: unknown; verdict?: unknown }[]) : [];
  return new Map(latches.map((l) => [String(l.id), String(l.verdict)]));
}

/** Replays one case; the PDP's decision and what came of it. */
async function replayCase(
  pep: Pep,
  dispatch: (name: string, args: Record<string, unknown>) => Promise<{ decision: PolicyDecision; executed: boolean }>,
  c: CorpusCase,
  lastEvent: () => DecisionEvent | undefined,
): Promise<{ decision: Omit<PolicyDecision, 'permitId'>; executed: boolean; redacted: boolean }> {
  if (c.stage === 'action') {
    const out = await dispatch(c.tool ?? '', c.args ?? {});
    return { decision: out.decision, executed: out.executed, redacted: false };
  }
  const stage = c.stage as TextStage;
  try {
    const text = await pep.guardText(stage, c.content ?? '');
    // guardText resolves with the text only; the decision itself reaches the onDecision observer.
    const redacted = text !== c.content;
    const decision = lastEvent()?.decision ?? { verdict: redacted ? 'WARN' : 'ALLOW', stage, requestId: '' };
    return { decision, executed: false, redacted };
  } catch (error) {
    if (!(error instanceof PolicyEnforcementError)) throw error;
    return { decision: error.decision, executed: false, redacted: false };
  }
}

/**
 * Runs the whole demo on 127.0.0.1 (no other network).
 * @throws CorpusError when the corpus cannot be used
 * @throws PolicyFileError when the policy cannot be used
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const started = performance.now();
  const corpus = await loadCorpus(options.corpusPath ?? DEFAULT_CORPUS);
  const policyPath = options.policyPath ?? DEFAULT_POLICY;
  const policy = withoutLatchesLabelled(await loadPolicy(policyPath), options.withoutLabel);
  for (const m of corpus.malformed) options.onMalformed?.(m.line, m.reason);
  const cases = options.sample ? sampleCases(corpus.cases, options.sample) : corpus.cases;
  const deciding = latchVerdicts(policy);

  const pdp = await startPolicyPdp(policy, policyPath);
  let service: ToolService | undefined;
  let pep: Pep | undefined;
  let interceptorCount = (): number => 0;
  try {
    service = await startToolService({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: SERVICE_AUDIENCE });
    let lastEvent: DecisionEvent | undefined;
    // One interceptor at work (docs/interceptors.md): every proposed tool call is stamped with a trace
    // id before the PDP sees it. The permit binds the stamped args, and the tool service verifies the
    // permit over exactly those args, so a call whose args changed after the PDP decided cannot run.
    let stamped = 0;
    const traceId: Interceptor = {
      name: 'trace-id',
      stages: ['action'],
      before: (step) => {
        stamped++;
        return { action: 'proceedWith', args: { ...step.args, traceId: `demo-${stamped}` } };
      },
    };
    interceptorCount = () => stamped;
    pep = createPep({
      pdpUrl: pdp.url,
      agentId: AGENT_ID,
      session: 'demo',
      permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
      interceptors: [traceId],
      onDecision: (event) => {
        lastEvent = event;
      },
    });
    const rows: CaseRow[] = [];
    for (const c of cases) {
      lastEvent = undefined;
      // Each case is a step on its own: decided in a session of its own, so that what one case did
      // (a label, a denial) never colours the next one. Whole sessions are replayed by session-replay.ts.
      const casePep = pep.withSession(c.id);
      const dispatcher = createDispatcher(casePep, service.url);
      const { decision, executed, redacted } = await replayCase(
        casePep,
        (name, args) => dispatcher.dispatch(name, args),
        c,
        () => lastEvent,
      );
      const verdict = decision.verdict;
      const latches = decision.latches ? [...decision.latches] : [];
      const row: CaseRow = {
        id: c.id,
        stage: c.stage,
        label: c.label,
        verdict,
        code: decision.synthesized?.code ?? null,
        latches,
        executed,
        decidingLatch: verdict === 'ALLOW' ? null : (latches.find((id) => deciding.get(id) === verdict) ?? null),
        redacted,
      };
      if (c.tool !== undefined) row.tool = c.tool;
      if (c.content !== undefined) row.content = c.content;
      rows.push(row);
      options.onCase?.(rows.length, cases.length, row);
    }
    const replayMs = performance.now() - started;
    options.onReplayed?.();
    await pep.close();
    pep = undefined;

    const callOf = (c: CorpusCase | undefined): ToolCall | undefined =>
      c ? { tool: c.tool ?? '', args: c.args ?? {} } : undefined;
    const executedRow = rows.find((r) => r.executed);
    const texts = Object.fromEntries(
      STAGES.filter((s) => s !== 'action').map((s) => [s, cases.find((c) => c.stage === s)?.content ?? FALLBACK_TEXT]),
    ) as Record<TextStage, string>;
    const failClosed = await runFailClosedChecks({
      pdp,
      service,
      agentId: AGENT_ID,
      allowedCall: callOf(executedRow && cases.find((c) => c.id === executedRow.id)) ?? FALLBACK_CALL,
      actionCall: callOf(cases.find((c) => c.stage === 'action')) ?? FALLBACK_CALL,
      texts,
      timeoutMs: options.failClosedTimeoutMs ?? 500,
    });

    // The PDP's evidence log: hash-chained and signed; verified against the PDP's public keys.
    const records = pdp.evidence();
    const evidence = await verifyEvidence(records, { keys: pdp.jwks });
    failClosed.push({
      check: 'evidence_chain',
      passed: evidence.ok && evidence.count === records.length,
      detail: evidence.ok
        ? `${evidence.count} evidence records, chain and signatures verified`
        : `evidence record ${evidence.index} does not verify: ${evidence.reason}`,
    });
    const permitsIssued = records.filter(
      (r) => r.stage === 'action' && (r.verdict === 'ALLOW' || r.verdict === 'WARN') && !r.simulated,
    ).length;

    const summary: DemoSummary = {
      ...summarize(rows),
      malformed: corpus.malformed.length,
      permits: { issued: permitsIssued, verified: service.ledger.length, refused: { ...service.refusals } },
      interceptor: { name: 'trace-id', stamped: interceptorCount() },
      evidence: evidence.ok
        ? { verified: true, records: records.length }
        : { verified: false, records: records.length, firstBad: evidence.index, reason: evidence.reason },
      replayMs: Math.round(replayMs),
      durationMs: Math.round(performance.now() - started),
    };
    const result: DemoResult = {
      cases: rows.map(({ id, stage, label, verdict, code, latches, executed }) => ({
        id,
        stage,
        label,
        verdict,
        code,
        latches,
        executed,
      })),
      summary,
      failClosed,
    };
    if (options.review !== undefined) {
      const escalated = new Set(rows.filter((r) => r.stage === 'action' && r.verdict === 'ESCALATE').map((r) => r.id));
      const calls = cases.filter((c) => escalated.has(c.id)).map((c) => ({ tool: c.tool ?? '', args: c.args ?? {} }));
      await options.review(result, { policy, agentId: AGENT_ID, audience: SERVICE_AUDIENCE, calls });
    }
    return result;
  } finally {
    await pep?.close();
    await pdp.close();
    await service?.close();
  }
}

/** What a case came to, for its label: the key it is counted under. */
function outcomeOf(r: CaseRow): string {
  const stopped = r.verdict === 'BLOCK' || r.verdict === 'ESCALATE';
  if (r.label === 'attack') return stopped ? 'stopped' : 'missed';
  if (r.label === 'benign') return stopped ? 'stopped' : 'passed';
  if (stopped) return 'blocked';
  return r.redacted ? 'redacted' : 'passed';
}

/**
 * Counts by stage, by verdict and by label.
 *
 * - attack: `stopped` when BLOCK or ESCALATE (no text passed, no tool ran), else `missed`;
 * - benign: `passed` when ALLOW or WARN, else `stopped` (a false positive);
 * - sensitive: `redacted` when the text came back changed, `blocked` when BLOCK or ESCALATE, else `passed`.
 */
export function summarize(rows: readonly CaseRow[]): Counts {
  const zero = (): VerdictCounts => ({ ALLOW: 0, WARN: 0, BLOCK: 0, ESCALATE: 0 });
  const byStage = Object.fromEntries(STAGES.map((s) => [s, { total: 0, ...zero() }])) as Counts['byStage'];
  const byVerdict = zero();
  const byLabel: Counts['byLabel'] = {
    attack: { total: 0, stopped: 0, missed: 0, byStage: {} },
    benign: { total: 0, passed: 0, stopped: 0, byStage: {} },
    sensitive: { total: 0, redacted: 0, blocked: 0, passed: 0, byStage: {} },
  };
  for (const r of rows) {
    byStage[r.stage].total++;
    byStage[r.stage][r.verdict]++;
    byVerdict[r.verdict]++;
    const outcome = outcomeOf(r);
    const label = byLabel[r.label] as unknown as Record<string, number> & {
      byStage: Partial<Record<Stage, OutcomeCounts>>;
    };
    label.total = (label.total ?? 0) + 1;
    label[outcome] = (label[outcome] ?? 0) + 1;
    label.byStage[r.stage] ??= { total: 0 };
    const at = label.byStage[r.stage] as OutcomeCounts;
    at.total++;
    at[outcome] = (at[outcome] ?? 0) + 1;
  }
  for (const l of LABELS) {
    const label = byLabel[l] as unknown as Record<string, unknown> & { byStage: Record<string, OutcomeCounts> };
    const keys = Object.keys(label).filter((k) => k !== 'total' && k !== 'byStage');
    for (const at of Object.values(label.byStage)) for (const k of keys) at[k] ??= 0;
  }
  return { total: rows.length, executed: rows.filter((r) => r.executed).length, byStage, byVerdict, byLabel };
}
