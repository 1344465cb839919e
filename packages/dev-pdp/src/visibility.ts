/**
 * Visibility requests (`purpose: 'visibility'`, docs/visibility.md): which tools the model may be
 * offered. Decided on the tool alone, by the action-stage latches that have neither `when`, `content`
 * nor `session` conditions (so a latch conditioned on args never hides a tool), always simulated (no
 * permit, no escalation opened or used up). A batch (`visibilityBatch: { id, size }`) is one evidence
 * record, written when its last request is decided, naming the tools hidden.
 * @packageDocumentation
 */
import type { EvidenceRecord, Stage, Verdict } from 'agent-pep/internal';
import { DEFAULT_BLOCK_REASON, evaluatePolicy } from './evaluate.js';
import type { EvidenceEntry, EvidenceLog } from './evidence.js';
import type { CompiledLatch, CompiledPolicy } from './policy.js';
import type { DecisionRequest } from './request.js';
import { randomId } from './signing.js';

/** What a visibility decision needs of the deciding context. @internal */
export interface VisibilityContext {
  policy: CompiledPolicy;
  evidence: EvidenceLog;
  onDecision?: ((record: EvidenceRecord) => void) | undefined;
}

/** A visibility decision (the shape of a dev PDP decision: never a permit, never an escalation). @internal */
export interface VisibilityDecision {
  verdict: Verdict;
  decisionId: string;
  requestId: string;
  stage: Stage;
  latches: string[];
  reason?: string;
  simulated: boolean;
}

/** How long a batch whose requests did not all arrive waits before it is recorded as it stands. */
const PARTIAL_BATCH_MS = 5000;

/** The latches that may decide visibility, per policy. */
const toolOnly = new WeakMap<CompiledPolicy, CompiledPolicy>();

/** Action-stage latches with neither `when`, `content` nor `session` conditions. */
function visibilityPolicy(policy: CompiledPolicy): CompiledPolicy {
  let out = toolOnly.get(policy);
  if (out === undefined) {
    const latches = policy.latches.filter(
      (latch: CompiledLatch) =>
        latch.stages.has('action') &&
        latch.when.length === 0 &&
        latch.content === undefined &&
        latch.session.length === 0,
    );
    // the action stage's default BLOCK hides only a tool no action latch could match (applied below)
    out = { ...policy, latches, defaults: {} };
    toolOnly.set(policy, out);
  }
  return out;
}

/**
 * True when the action stage's `default` is BLOCK and no enforced action latch could engage on `tool`
 * (none without a `tool`, none whose `tool` matches): every call of it would be blocked, so it is hidden.
 */
function hiddenByDefault(policy: CompiledPolicy, tool: string): boolean {
  if (policy.defaults?.action !== 'BLOCK') return false;
  return !policy.latches.some(
    (latch) => latch.stages.has('action') && !latch.audit && (latch.tool === undefined || latch.tool.test(tool)),
  );
}

/** A batch being decided: one decision id, one record. */
interface Batch {
  readonly decisionId: string;
  readonly id: string;
  readonly size: number;
  readonly agentId: string;
  readonly session: string;
  /** Request ids decided (a retried request is answered again, not counted again). */
  readonly seen: Set<string>;
  readonly hidden: string[];
  readonly latches: Set<string>;
  timer: NodeJS.Timeout | undefined;
  done: boolean;
}

/** The open batches of each evidence log (one per dev PDP). */
const openBatches = new WeakMap<EvidenceLog, Map<string, Batch>>();

/** The record of a whole (or, after {@link PARTIAL_BATCH_MS}, partial) batch. */
async function record(ctx: VisibilityContext, batch: Batch): Promise<void> {
  if (batch.done) return;
  batch.done = true;
  if (batch.timer) clearTimeout(batch.timer);
  openBatches.get(ctx.evidence)?.delete(`${batch.agentId}\u0000${batch.session}\u0000${batch.id}`);
  const order = visibilityPolicy(ctx.policy).latches.map((latch) => latch.id);
  const entry: EvidenceEntry = {
    decisionId: batch.decisionId,
    requestId: batch.id,
    agentId: batch.agentId,
    session: batch.session,
    stage: 'action',
    verdict: batch.hidden.length > 0 ? 'BLOCK' : 'ALLOW',
    latches: order.filter((id) => batch.latches.has(id)),
    reason: `visibility: ${batch.hidden.length} of ${batch.seen.size} tools hidden`,
    visibility: { size: batch.size, decided: batch.seen.size, hidden: [...batch.hidden] },
    simulated: true,
  };
  await append(ctx, entry);
}

async function append(ctx: VisibilityContext, entry: EvidenceEntry): Promise<void> {
  const written = await ctx.evidence.append(entry);
  try {
    ctx.onDecision?.(structuredClone(written));
  } catch {
    // an observer cannot change the decision
  }
}

/** The batch `request` belongs to, opened at its first request. */
function batchOf(ctx: VisibilityContext, request: DecisionRequest, tag: { id: string; size: number }): Batch {
  let open = openBatches.get(ctx.evidence);
  if (open === undefined) {
    open = new Map();
    openBatches.set(ctx.evidence, open);
  }
  const key = `${request.agentId}\u0000${request.session}\u0000${tag.id}`;
  let batch = open.get(key);
  if (batch === undefined || batch.size !== tag.size) {
    batch = {
      decisionId: randomId('dec_'),
      id: tag.id,
      size: tag.size,
      agentId: request.agentId,
      session: request.session,
      seen: new Set(),
      hidden: [],
      latches: new Set(),
      timer: undefined,
      done: false,
    };
    const opened = batch;
    open.set(key, opened);
    opened.timer = setTimeout(() => void record(ctx, opened).catch(() => undefined), PARTIAL_BATCH_MS);
    opened.timer.unref();
  }
  return batch;
}

/**
 * Decides one visibility request; records it (alone, or as part of its batch).
 * @internal
 */
export async function decideVisibility(ctx: VisibilityContext, request: DecisionRequest): Promise<VisibilityDecision> {
  const tool = request.tool as string;
  const evaluation = hiddenByDefault(ctx.policy, tool)
    ? { verdict: 'BLOCK' as const, reason: DEFAULT_BLOCK_REASON, latches: [] }
    : evaluatePolicy(visibilityPolicy(ctx.policy), { stage: 'action', tool });
  const hidden = evaluation.verdict === 'BLOCK';
  const tag = request.visibilityBatch;
  let decisionId: string;
  if (tag === undefined) {
    decisionId = randomId('dec_');
    const entry: EvidenceEntry = {
      decisionId,
      requestId: request.requestId,
      agentId: request.agentId,
      session: request.session,
      stage: 'action',
      verdict: evaluation.verdict,
      latches: evaluation.latches,
      tool,
      visibility: { size: 1, decided: 1, hidden: hidden ? [tool] : [] },
      simulated: true,
    };
    if (evaluation.reason !== undefined) entry.reason = evaluation.reason;
    await append(ctx, entry);
  } else {
    const batch = batchOf(ctx, request, tag);
    decisionId = batch.decisionId;
    if (!batch.done && !batch.seen.has(request.requestId)) {
      batch.seen.add(request.requestId);
      if (hidden && !batch.hidden.includes(tool)) batch.hidden.push(tool);
      for (const id of evaluation.latches) batch.latches.add(id);
      if (batch.seen.size >= batch.size) await record(ctx, batch);
    }
  }
  const decision: VisibilityDecision = {
    verdict: evaluation.verdict,
    decisionId,
    requestId: request.requestId,
    stage: 'action',
    latches: evaluation.latches,
    simulated: true,
  };
  if (evaluation.reason !== undefined) decision.reason = evaluation.reason;
  return decision;
}
