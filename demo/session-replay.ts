/**
 * Replaying whole agent sessions (demo/agent-sessions.jsonl): each session's steps go through the
 * SDK in the file's order, under the session's own id (`pep.withSession(id)`), so that the dev PDP
 * decides each step in the light of the ones before it (docs/dev-pdp.md, Sessions). Text goes
 * through the stage methods (`checkInput`, `checkContextEgress` with the tool whose result it is,
 * `checkOutput`, `checkDelivery`); tool calls through a dispatcher of `pep.guardTool`-wrapped tools
 * that present their permit to the tool service. One session's steps run strictly one after the
 * other; a few sessions run side by side. Returns the JSON `--sessions --json` prints; prints nothing.
 * @module
 */
import { createHash } from 'node:crypto';
import { createPep, type Pep, type PolicyDecision, type Verdict } from 'agent-pep';
import type { Label } from './corpus.js';
import { createDispatcher, type Dispatcher } from './dispatcher.js';
import {
  AGENT_ID,
  DEFAULT_POLICY,
  DEMO_DIR,
  latchVerdicts,
  loadPolicy,
  startPolicyPdp,
  withoutLatchesLabelled,
} from './replay.js';
import { type AgentSession, loadSessions, type SessionLabel, type SessionStep } from './sessions.js';
import { startToolService, type ToolService } from './tool-service.js';

/** The default session corpus. */
export const DEFAULT_SESSIONS = new URL('agent-sessions.jsonl', DEMO_DIR);

/** The session corpora `npm run demo` replays by default: the shared sessions, then AgentDyn's. */
export const DEFAULT_SESSION_FILES: readonly URL[] = [DEFAULT_SESSIONS, new URL('agentdyn-sessions.jsonl', DEMO_DIR)];

/** How many sessions are replayed side by side by default. */
export const DEFAULT_CONCURRENCY = 4;

/** One step of a session in the JSON: what the PDP decided and what the session carried after it. */
export interface SessionStepResult {
  stage: SessionStep['stage'];
  label: Label;
  verdict: Verdict;
  /** Every engaged latch id, in policy order. */
  latches: string[];
  /** The session's labels after this step, as the PDP sent them (`[]` when it sent none). */
  sessionLabels: string[];
  /**
   * The intent grants the PDP named (`[]` when none): on an input step the grants the user's words
   * made, on an action step the grants the call was inside.
   */
  grants: string[];
  /** Only on a synthesized (fail-closed) decision: its code. */
  code?: string;
}

/** One session in the JSON, its steps in the file's order. */
export interface SessionResult {
  id: string;
  label: SessionLabel;
  /** The grants the session's input steps made, in order (what the policy's intent rules read from the user). */
  grants: string[];
  steps: SessionStepResult[];
}

/** A step with what the per-session lines show. */
export interface SessionStepRow extends SessionStepResult {
  tool?: string;
  /** A tool ran (action steps only). */
  executed: boolean;
  /** The latch whose verdict decided the step, when one did. */
  decidingLatch: string | null;
}

/** A session with what the per-session lines show. */
export interface SessionRow extends SessionResult {
  steps: SessionStepRow[];
}

/** What became of one session, for its label (see {@link sessionOutcome}). */
export interface SessionOutcome {
  /** attack: its first attack step, or every attack tool call (at least one), was BLOCK or ESCALATE. */
  stopped: boolean;
  /** attack: its first attack step was BLOCK or ESCALATE. */
  stoppedAtFirstAttackStep: boolean;
  /** attack: it has attack tool calls, and every one was BLOCK or ESCALATE. */
  everyAttackCallStopped: boolean;
  /** Some step was BLOCK. */
  blocked: boolean;
  /** Some step was ESCALATE (held for review). */
  held: boolean;
  /** 0-based index of the first BLOCK or ESCALATE step, or -1. */
  firstStop: number;
}

/** The JSON `summary` of a session replay. */
export interface SessionSummary {
  sessions: number;
  steps: number;
  /** Lines of the session file skipped. */
  malformed: number;
  /** Steps by verdict. */
  byVerdict: Record<Verdict, number>;
  attack: {
    total: number;
    /** Stopped: the first attack step, or every attack tool call, BLOCK or ESCALATE. */
    stopped: number;
    missed: number;
    stoppedAtFirstAttackStep: number;
    everyAttackCallStopped: number;
    /** Attack tool calls, and how many of them the tool service performed. */
    attackCalls: number;
    attackCallsRun: number;
  };
  benign: {
    total: number;
    /** Benign sessions with at least one BLOCK. */
    blocked: number;
    /** Benign sessions with at least one ESCALATE (held for review). */
    held: number;
    /** Benign sessions with neither. */
    clean: number;
  };
  /** The same three figures in percent, one decimal (null when there is no such session). */
  percent: { attackStopped: number | null; benignBlocked: number | null; benignHeld: number | null };
  replayMs: number;
}

/** What `--sessions FILE --json` prints. */
export interface SessionReplayResult {
  sessions: SessionResult[];
  summary: SessionSummary;
}

/** Which sessions to replay: all, or one part of a fixed split by the SHA-256 of the id. */
export type SessionSplit = 'all' | 'fit' | 'held-out';

/** Options of {@link runSessions}. */
export interface SessionReplayOptions {
  /** JSON Lines session file. @defaultValue demo/agent-sessions.jsonl */
  sessionsPath?: string | URL;
  /** Dev PDP policy; it must list the agent `support-ai`. @defaultValue demo/policy.json */
  policyPath?: string | URL;
  /** Sessions replayed side by side (each one's steps always in order). @defaultValue 4 */
  concurrency?: number;
  /** Replay only one part of the split (see {@link splitOf}). @defaultValue 'all' */
  split?: SessionSplit;
  /** Leave out every latch that adds this session label (`--without-wording`: `injected`). */
  withoutLabel?: string;
  /** Called after each session, in the order they finish. */
  onSession?: (done: number, total: number, row: SessionRow) => void;
  /** Called for each skipped line. */
  onMalformed?: (line: number, reason: string) => void;
}

/**
 * The part of the fixed split a session id falls in: `held-out` when the first byte of the SHA-256
 * of the id is a multiple of 3 (about a third), else `fit`. A policy is tuned on `fit` and measured
 * on `held-out` to see how it does on sessions it was not tuned on.
 */
export function splitOf(id: string): 'fit' | 'held-out' {
  const first = createHash('sha256').update(id).digest()[0] ?? 0;
  return first % 3 === 0 ? 'held-out' : 'fit';
}

const isStop = (v: Verdict): boolean => v === 'BLOCK' || v === 'ESCALATE';

/** What became of a session: stopped (attack), blocked or held, and where it was first stopped. */
export function sessionOutcome(session: { label: SessionLabel; steps: readonly SessionStepResult[] }): SessionOutcome {
  const { steps } = session;
  const firstAttack = steps.find((s) => s.label === 'attack');
  const attackCalls = steps.filter((s) => s.stage === 'action' && s.label === 'attack');
  const stoppedAtFirstAttackStep = firstAttack !== undefined && isStop(firstAttack.verdict);
  const everyAttackCallStopped = attackCalls.length > 0 && attackCalls.every((s) => isStop(s.verdict));
  return {
    stopped: session.label === 'attack' && (stoppedAtFirstAttackStep || everyAttackCallStopped),
    stoppedAtFirstAttackStep,
    everyAttackCallStopped,
    blocked: steps.some((s) => s.verdict === 'BLOCK'),
    held: steps.some((s) => s.verdict === 'ESCALATE'),
    firstStop: steps.findIndex((s) => isStop(s.verdict)),
  };
}

const percent = (n: number, total: number): number | null => (total === 0 ? null : Math.round((n * 1000) / total) / 10);

/** Counts sessions by what became of them (see {@link SessionSummary}). */
export function summarizeSessions(
  rows: readonly SessionRow[],
  extra: { malformed: number; replayMs: number },
): SessionSummary {
  const byVerdict: Record<Verdict, number> = { ALLOW: 0, WARN: 0, BLOCK: 0, ESCALATE: 0 };
  const attack = {
    total: 0,
    stopped: 0,
    missed: 0,
    stoppedAtFirstAttackStep: 0,
    everyAttackCallStopped: 0,
    attackCalls: 0,
    attackCallsRun: 0,
  };
  const benign = { total: 0, blocked: 0, held: 0, clean: 0 };
  let steps = 0;
  for (const row of rows) {
    for (const s of row.steps) byVerdict[s.verdict]++;
    steps += row.steps.length;
    const o = sessionOutcome(row);
    if (row.label === 'attack') {
      attack.total++;
      attack[o.stopped ? 'stopped' : 'missed']++;
      if (o.stoppedAtFirstAttackStep) attack.stoppedAtFirstAttackStep++;
      if (o.everyAttackCallStopped) attack.everyAttackCallStopped++;
      const calls = row.steps.filter((s) => s.stage === 'action' && s.label === 'attack');
      attack.attackCalls += calls.length;
      attack.attackCallsRun += calls.filter((s) => s.executed).length;
    } else {
      benign.total++;
      if (o.blocked) benign.blocked++;
      if (o.held) benign.held++;
      if (!o.blocked && !o.held) benign.clean++;
    }
  }
  return {
    sessions: rows.length,
    steps,
    malformed: extra.malformed,
    byVerdict,
    attack,
    benign,
    percent: {
      attackStopped: percent(attack.stopped, attack.total),
      benignBlocked: percent(benign.blocked, benign.total),
      benignHeld: percent(benign.held, benign.total),
    },
    replayMs: Math.round(extra.replayMs),
  };
}

/** Decides one text step through its stage method (they never reject). */
function checkText(pep: Pep, step: SessionStep): Promise<PolicyDecision> {
  const content = step.content ?? '';
  switch (step.stage) {
    case 'input':
      return pep.checkInput(content);
    case 'context_egress':
      return pep.checkContextEgress(content, step.tool !== undefined ? { tool: step.tool } : {});
    case 'output':
      return pep.checkOutput(content);
    default:
      return pep.checkDelivery(content);
  }
}

/** The session's labels as the decision carries them (`[]` when the PDP sent none). */
function labelsOf(decision: PolicyDecision): string[] {
  return decision.sessionLabels ? [...decision.sessionLabels] : [];
}

/** The grant ids the decision names (`[]` when the PDP sent none). */
function grantsOf(decision: PolicyDecision): string[] {
  return decision.grants ? [...decision.grants] : [];
}

/** The grants a session's input steps made, each once, in order. */
function grantsMade(steps: readonly SessionStepResult[]): string[] {
  const made = new Set<string>();
  for (const step of steps) if (step.stage === 'input') for (const id of step.grants) made.add(id);
  return [...made];
}

/** Replays one session's steps, strictly in order, under its own session id. */
async function replaySession(
  pep: Pep,
  serviceUrl: string,
  session: AgentSession,
  deciding: ReadonlyMap<string, string>,
): Promise<SessionRow> {
  const bound = pep.withSession(session.id);
  const dispatcher: Dispatcher = createDispatcher(bound, serviceUrl);
  const steps: SessionStepRow[] = [];
  for (const step of session.steps) {
    let decision: PolicyDecision;
    let executed = false;
    if (step.stage === 'action') {
      const out = await dispatcher.dispatch(step.tool ?? '', step.args ?? {});
      decision = out.decision;
      executed = out.executed;
    } else {
      decision = await checkText(bound, step);
    }
    const latches = decision.latches ? [...decision.latches] : [];
    const row: SessionStepRow = {
      stage: step.stage,
      label: step.label,
      verdict: decision.verdict,
      latches,
      sessionLabels: labelsOf(decision),
      grants: grantsOf(decision),
      executed,
      decidingLatch:
        decision.verdict === 'ALLOW' ? null : (latches.find((id) => deciding.get(id) === decision.verdict) ?? null),
    };
    if (decision.synthesized) row.code = decision.synthesized.code;
    if (step.tool !== undefined) row.tool = step.tool;
    steps.push(row);
  }
  return { id: session.id, label: session.label, grants: grantsMade(steps), steps };
}

/** Runs `work` on every item, at most `limit` at a time; results in the items' order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

/** The JSON of a row: the fields `--json` promises, and no others. */
export function sessionResultOf(row: SessionRow): SessionResult {
  return {
    id: row.id,
    label: row.label,
    grants: row.grants,
    steps: row.steps.map(({ stage, label, verdict, latches, sessionLabels, grants, code }) =>
      code === undefined
        ? { stage, label, verdict, latches, sessionLabels, grants }
        : { stage, label, verdict, latches, sessionLabels, grants, code },
    ),
  };
}

/**
 * Replays a session corpus on 127.0.0.1 (no other network): a dev PDP with the policy, the tool
 * service, and the SDK, one session id per session.
 * @returns the sessions (file order) and the summary, plus the rows the per-session lines show
 * @throws CorpusError when the session file cannot be used
 * @throws PolicyFileError when the policy cannot be used
 * @throws TypeError (`err.option` = `'concurrency'`) when concurrency is not a whole number from 1 to 64
 */
export async function runSessions(
  options: SessionReplayOptions = {},
): Promise<SessionReplayResult & { rows: SessionRow[] }> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64) {
    throw Object.assign(new TypeError('concurrency must be a whole number from 1 to 64'), { option: 'concurrency' });
  }
  const started = performance.now();
  const corpus = await loadSessions(options.sessionsPath ?? DEFAULT_SESSIONS);
  const policyPath = options.policyPath ?? DEFAULT_POLICY;
  const policy = withoutLatchesLabelled(await loadPolicy(policyPath), options.withoutLabel);
  for (const m of corpus.malformed) options.onMalformed?.(m.line, m.reason);
  const split = options.split ?? 'all';
  const sessions = split === 'all' ? corpus.sessions : corpus.sessions.filter((s) => splitOf(s.id) === split);
  const deciding = latchVerdicts(policy);

  const pdp = await startPolicyPdp(policy, policyPath);
  let service: ToolService | undefined;
  let pep: Pep | undefined;
  try {
    service = await startToolService({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: pdp.audience });
    pep = createPep({
      pdpUrl: pdp.url,
      agentId: AGENT_ID,
      session: 'demo-sessions',
      permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
    });
    const root = pep;
    const serviceUrl = service.url;
    let done = 0;
    const rows = await mapLimited(sessions, concurrency, async (s) => {
      const row = await replaySession(root, serviceUrl, s, deciding);
      options.onSession?.(++done, sessions.length, row);
      return row;
    });
    const summary = summarizeSessions(rows, {
      malformed: corpus.malformed.length,
      replayMs: performance.now() - started,
    });
    return { sessions: rows.map(sessionResultOf), summary, rows };
  } finally {
    await pep?.close();
    await pdp.close();
    await service?.close();
  }
}
