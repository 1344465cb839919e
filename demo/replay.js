/**
 * The demo's core: start the dev PDP with demo/policy.json and the tool service, replay every
 * corpus case through its stage with the public API only (text through `pep.guardText`, actions
 * through a dispatcher of `pep.guardTool`-wrapped tools), then run the fail-closed checks and verify
 * the PDP's evidence chain. Returns the JSON result the CLI prints with `--json`.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { createPep, PolicyBlockedError, PolicyEscalatedError, verifyEvidence } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';
import { LABELS, loadCorpus, STAGES, sampleCases } from './corpus.js';
import { createDispatcher } from './dispatcher.js';
import { runFailClosedChecks } from './failclosed.js';
import { startToolService } from './tool-service.js';

/** The default corpus and policy, next to this folder. */
export const DEFAULT_CORPUS = new URL('./agent-traffic.jsonl', import.meta.url);
export const DEFAULT_POLICY = new URL('./policy.json', import.meta.url);
/** The agent the demo speaks for (listed in the policy's `agents`). */
export const AGENT_ID = 'support-ai';
/** The `aud` of the permits: the tool service. */
export const SERVICE_AUDIENCE = 'demo-tool-service';

const VERDICTS = /** @type {const} */ (['ALLOW', 'WARN', 'BLOCK', 'ESCALATE']);
/** Used for a fail-closed check when the replayed traffic has no case of its own to offer. */
const FALLBACK_TEXT = 'Hi, I need to change the delivery address of my order.';
const FALLBACK_CALL = { tool: 'get_order_details', args: { order_id: '#W0000000' } };

/**
 * @typedef {object} CaseResult - one line of the JSON `cases`
 * @property {string} id
 * @property {string} stage
 * @property {string} label
 * @property {'ALLOW'|'WARN'|'BLOCK'|'ESCALATE'} verdict
 * @property {string | null} code - the synthesized (fail-closed) code, or null for a PDP verdict
 * @property {string[]} latches - every engaged latch id
 * @property {boolean} executed - a tool ran (action cases only; always false for text)
 */

/**
 * @typedef {CaseResult & { tool?: string, content?: string, decidingLatch: string | null, redacted: boolean }} CaseRow
 *   - a case result with what the table shows (`content` is the original text; print it sanitized)
 */

/**
 * @typedef {object} DemoResult
 * @property {CaseResult[]} cases
 * @property {Record<string, any>} summary - `byStage`, `byVerdict`, `byLabel`, `permits`, `evidence`, ...
 * @property {import('./failclosed.js').FailClosedCheck[]} failClosed
 */

/**
 * @typedef {object} DemoOptions
 * @property {string | URL} [corpusPath] - JSON Lines corpus; default demo/agent-traffic.jsonl
 * @property {string | URL} [policyPath] - dev PDP policy; default demo/policy.json
 * @property {number} [sample] - replay a deterministic sample of this many cases spanning every stage/label
 * @property {number} [failClosedTimeoutMs] - deadline of the fault-check client, in milliseconds; default 500
 * @property {(done: number, total: number, row: CaseRow) => void} [onCase] - after each case
 * @property {(line: number, reason: string) => void} [onMalformed] - for each skipped corpus line
 * @property {boolean} [quiet] - accepted for the CLI's sake; the core prints nothing
 * @property {boolean} [json] - accepted for the CLI's sake; the core prints nothing
 */

/**
 * Runs the whole demo on 127.0.0.1 (no other network).
 * @param {DemoOptions} [options]
 * @returns {Promise<DemoResult>}
 * @throws {import('./corpus.js').CorpusError} when the corpus cannot be used
 */
export async function runDemo(options = {}) {
  const started = performance.now();
  const corpus = await loadCorpus(options.corpusPath ?? DEFAULT_CORPUS);
  for (const m of corpus.malformed) options.onMalformed?.(m.line, m.reason);
  const cases = options.sample ? sampleCases(corpus.cases, options.sample) : corpus.cases;
  const policy = JSON.parse(await readFile(options.policyPath ?? DEFAULT_POLICY, 'utf8'));
  /** @type {Map<string, string>} */
  const latchVerdicts = new Map((policy.latches ?? []).map((/** @type {any} */ l) => [l.id, l.verdict]));

  const pdp = await startDevPdp({ policy, host: '127.0.0.1', port: 0, audience: SERVICE_AUDIENCE });
  /** @type {import('./tool-service.js').ToolService | undefined} */
  let service;
  /** @type {import('agent-pep').Pep | undefined} */
  let pep;
  try {
    service = await startToolService({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: SERVICE_AUDIENCE });
    /** @type {import('agent-pep').DecisionEvent | undefined} */
    let lastEvent;
    pep = createPep({
      pdpUrl: pdp.url,
      agentId: AGENT_ID,
      session: 'demo',
      permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
      onDecision: (event) => {
        lastEvent = event;
      },
    });
    const dispatcher = createDispatcher(pep, service.url);

    /** @type {CaseRow[]} */
    const rows = [];
    for (const c of cases) {
      /** @type {import('agent-pep').PolicyDecision | undefined} */
      let decision;
      let executed = false;
      let redacted = false;
      if (c.stage === 'action') {
        const out = await dispatcher.dispatch(/** @type {string} */ (c.tool), c.args ?? {});
        decision = out.decision;
        executed = out.executed;
      } else {
        lastEvent = undefined;
        const stage = /** @type {import('agent-pep').TextStage} */ (c.stage);
        try {
          const text = await pep.guardText(stage, /** @type {string} */ (c.content));
          // guardText resolves with the text only; the decision itself reaches the onDecision observer.
          redacted = text !== c.content;
          decision = lastEvent?.decision ?? {
            verdict: redacted ? 'WARN' : 'ALLOW',
            stage,
            requestId: '',
          };
        } catch (error) {
          if (!(error instanceof PolicyBlockedError || error instanceof PolicyEscalatedError)) throw error;
          decision = error.decision;
        }
      }
      const verdict = decision?.verdict ?? 'BLOCK';
      const latches = decision?.latches ? [...decision.latches] : [];
      /** @type {CaseRow} */
      const row = {
        id: c.id,
        stage: c.stage,
        label: c.label,
        verdict,
        code: decision?.synthesized?.code ?? null,
        latches,
        executed,
        decidingLatch: latches.find((id) => latchVerdicts.get(id) === verdict) ?? null,
        redacted,
      };
      if (c.tool !== undefined) row.tool = c.tool;
      if (c.content !== undefined) row.content = c.content;
      rows.push(row);
      options.onCase?.(rows.length, cases.length, row);
    }
    const replayMs = performance.now() - started;
    await pep.close();
    pep = undefined;

    const executedRow = rows.find((r) => r.executed);
    const executedCase = executedRow && cases.find((c) => c.id === executedRow.id);
    const firstAction = cases.find((c) => c.stage === 'action');
    const texts = /** @type {Record<'input'|'context_egress'|'output'|'delivery', string>} */ (
      Object.fromEntries(
        STAGES.filter((s) => s !== 'action').map((s) => [
          s,
          cases.find((c) => c.stage === s)?.content ?? FALLBACK_TEXT,
        ]),
      )
    );
    const failClosed = await runFailClosedChecks({
      pdp,
      service,
      agentId: AGENT_ID,
      allowedCall: executedCase
        ? { tool: /** @type {string} */ (executedCase.tool), args: executedCase.args ?? {} }
        : FALLBACK_CALL,
      actionCall: firstAction
        ? { tool: /** @type {string} */ (firstAction.tool), args: firstAction.args ?? {} }
        : FALLBACK_CALL,
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

    const summary = summarize(rows);
    summary.malformed = corpus.malformed.length;
    summary.permits = {
      issued: permitsIssued,
      verified: service.ledger.length,
      refused: { ...service.refusals },
    };
    summary.evidence = evidence.ok
      ? { verified: true, records: records.length }
      : { verified: false, records: records.length, firstBad: evidence.index, reason: evidence.reason };
    summary.replayMs = Math.round(replayMs);
    summary.durationMs = Math.round(performance.now() - started);
    return {
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
  } finally {
    await pep?.close();
    await pdp.close();
    await service?.close();
  }
}

/**
 * Counts by stage, by verdict and by label.
 *
 * - attack: `stopped` when BLOCK or ESCALATE (no text passed, no tool ran), else `missed`;
 * - benign: `passed` when ALLOW or WARN, else `stopped` (a false positive);
 * - sensitive: `redacted` when the text came back changed, `blocked` when BLOCK or ESCALATE, else `passed`.
 * @param {CaseRow[]} rows
 * @returns {Record<string, any>}
 */
export function summarize(rows) {
  const zero = () => Object.fromEntries(VERDICTS.map((v) => [v, 0]));
  /** @type {Record<string, any>} */
  const byStage = Object.fromEntries(STAGES.map((s) => [s, { total: 0, ...zero() }]));
  /** @type {Record<string, number>} */
  const byVerdict = zero();
  /** @type {Record<string, any>} */
  const byLabel = {
    attack: { total: 0, stopped: 0, missed: 0, byStage: {} },
    benign: { total: 0, passed: 0, stopped: 0, byStage: {} },
    sensitive: { total: 0, redacted: 0, blocked: 0, passed: 0, byStage: {} },
  };
  for (const r of rows) {
    byStage[r.stage].total++;
    byStage[r.stage][r.verdict]++;
    byVerdict[r.verdict]++;
    const stopped = r.verdict === 'BLOCK' || r.verdict === 'ESCALATE';
    const outcome =
      r.label === 'attack'
        ? stopped
          ? 'stopped'
          : 'missed'
        : r.label === 'benign'
          ? stopped
            ? 'stopped'
            : 'passed'
          : stopped
            ? 'blocked'
            : r.redacted
              ? 'redacted'
              : 'passed';
    const label = byLabel[r.label];
    label.total++;
    label[outcome]++;
    label.byStage[r.stage] ??= { total: 0, [outcome]: 0 };
    label.byStage[r.stage].total++;
    label.byStage[r.stage][outcome] = (label.byStage[r.stage][outcome] ?? 0) + 1;
  }
  for (const l of LABELS) {
    for (const s of Object.values(byLabel[l].byStage)) {
      for (const k of Object.keys(byLabel[l])) if (!['total', 'byStage'].includes(k)) s[k] ??= 0;
    }
  }
  return { total: rows.length, executed: rows.filter((r) => r.executed).length, byStage, byVerdict, byLabel };
}
