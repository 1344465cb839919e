/**
 * The demo's core (demo/replay.ts) on a deterministic sample of the corpus: replayed through the dev
 * PDP, the tool service and the public API, then the fail-closed checks. The demo imports
 * 'agent-pep' by name; here that name is mapped to the sources.
 */
import { readFile } from 'node:fs/promises';
import { RE2JS } from 're2js';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { type CorpusCase, loadCorpus, sampleCases } from '../../../demo/corpus.js';
import { DEFAULT_CORPUS, DEMO_DIR, type DemoResult, runDemo } from '../../../demo/replay.js';
import { checkShape, FAIL_CLOSED } from './shape.js';

vi.mock('agent-pep', () => import('../../../src/index.js'));
vi.mock('agent-pep/dev-pdp', () => import('../../../packages/dev-pdp/src/index.js'));

/** Attack tool calls the policy is known to let through (see the demo report): none of them may grow. */
const KNOWN_ACTION_MISSES = new Set(['injecagent-0207', 'agentdojo-0209', 'agentdojo-0210']);

describe('demo core on a sample of the corpus', () => {
  let result: DemoResult;
  let groups: Set<string>;
  let sample: CorpusCase[];

  beforeAll(async () => {
    const corpus = await loadCorpus(DEFAULT_CORPUS);
    groups = new Set(corpus.cases.map((c) => `${c.stage}/${c.label}`));
    result = await runDemo({ sample: 40 });
    sample = sampleCases(corpus.cases, 40);
  });

  it('replays a deterministic sample that spans every stage/label group, in corpus order', () => {
    expect(result.cases).toHaveLength(40);
    expect(new Set(result.cases.map((c) => `${c.stage}/${c.label}`))).toEqual(groups);
    expect(result.cases.map((c) => c.id)).toEqual(sample.map((c) => c.id));
  });

  it('writes the JSON fields the CLI promises', () => {
    checkShape(result);
    expect(result.summary.malformed).toBe(0);
  });

  it('holds every fail-closed check', () => {
    expect(result.failClosed.map((f) => f.check)).toEqual(FAIL_CLOSED);
    for (const f of result.failClosed) expect(f, f.detail).toMatchObject({ passed: true });
  });

  it('runs a tool only on an ALLOW or WARN from the PDP, never for text and never on a synthesized decision', () => {
    for (const c of result.cases) {
      if (c.executed) {
        expect(c.stage).toBe('action');
        expect(['ALLOW', 'WARN']).toContain(c.verdict);
      }
      if (c.stage === 'action' && (c.verdict === 'ALLOW' || c.verdict === 'WARN')) expect(c.executed).toBe(true);
      // the PDP is healthy during the replay: every verdict is its own
      expect(c.code).toBeNull();
    }
  });

  it('runs no attacker tool call but the known misses', () => {
    const ran = result.cases.filter((c) => c.label === 'attack' && c.executed).map((c) => c.id);
    for (const id of ran) expect(KNOWN_ACTION_MISSES).toContain(id);
  });

  it('stops injected tool output but what only the audit latches see, and redacts personal data in delivered replies', async () => {
    // the request-wording latches (send data to an address, move money, share or delete) run in audit
    // mode: an injected tool result that passes is one of theirs, recorded in evidence, never enforced
    const policy = JSON.parse(await readFile(new URL('policy.json', DEMO_DIR), 'utf8')) as {
      latches: { mode?: string; content?: string }[];
    };
    const audit = policy.latches
      .filter((l) => l.mode === 'audit' && l.content)
      .map((l) => RE2JS.compile(l.content ?? ''));
    expect(audit.length).toBe(3);
    const byId = new Map(sample.map((c) => [c.id, c]));
    for (const c of result.cases) {
      if (c.stage === 'context_egress' && c.label === 'attack' && c.verdict !== 'BLOCK') {
        const text = byId.get(c.id)?.content ?? '';
        expect(audit.some((re) => re.matcher(text).find())).toBe(true);
      }
      if (c.stage === 'delivery' && c.label === 'sensitive') expect(c.verdict).toBe('WARN');
      if (c.stage === 'input' && c.label === 'benign') expect(c.verdict).toBe('ALLOW');
    }
  });

  it('counts permits: every executed call used one permit, plus the replay check; refusals by code', () => {
    const { permits, executed, evidence } = result.summary;
    expect(executed).toBe(result.cases.filter((c) => c.executed).length);
    expect(permits.verified).toBe(executed + 1);
    expect(permits.issued).toBeGreaterThanOrEqual(permits.verified + 1);
    expect(permits.refused).toEqual({ permit_replayed: 1, permit_args_mismatch: 1 });
    expect(evidence.verified).toBe(true);
    expect(evidence.records).toBeGreaterThanOrEqual(result.cases.length);
  });

  it('stamps every proposed tool call through the trace-id interceptor, and the service verifies the stamped args', () => {
    const actions = result.cases.filter((c) => c.stage === 'action').length;
    expect(result.summary.interceptor).toEqual({ name: 'trace-id', stamped: actions });
    // every executed call ran over stamped args: its permit verified at the service (counted above)
    expect(result.summary.permits.refused.permit_args_mismatch).toBe(1);
  });

  it('refuses a corpus it cannot read', async () => {
    await expect(runDemo({ corpusPath: new URL('no-such-corpus.jsonl', DEMO_DIR) })).rejects.toMatchObject({
      code: 'corpus_invalid',
    });
  });

  it('refuses a policy it cannot use, before it starts anything', async () => {
    await expect(runDemo({ policyPath: new URL('no-such-policy.json', DEMO_DIR) })).rejects.toMatchObject({
      code: 'policy_invalid',
    });
  });
});
