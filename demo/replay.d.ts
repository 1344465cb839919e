/** Types of examples/demo/replay.js, for TypeScript callers (the tests). */
import type { CorpusError } from './corpus.js';

export type DemoStage = 'input' | 'context_egress' | 'output' | 'delivery' | 'action';
export type DemoLabel = 'benign' | 'attack' | 'sensitive';
export type DemoVerdict = 'ALLOW' | 'WARN' | 'BLOCK' | 'ESCALATE';

/** One line of the JSON `cases`. */
export interface CaseResult {
  id: string;
  stage: DemoStage;
  label: DemoLabel;
  verdict: DemoVerdict;
  /** The synthesized (fail-closed) code, or null for a verdict the PDP gave. */
  code: string | null;
  latches: string[];
  /** A tool ran (always false for text cases). */
  executed: boolean;
}

/** A case result with what the table shows. */
export interface CaseRow extends CaseResult {
  tool?: string;
  content?: string;
  decidingLatch: string | null;
  redacted: boolean;
}

export interface FailClosedCheck {
  check: string;
  passed: boolean;
  detail: string;
}

type VerdictCounts = Record<DemoVerdict, number>;

export interface DemoSummary {
  total: number;
  executed: number;
  malformed: number;
  byStage: Record<DemoStage, { total: number } & VerdictCounts>;
  byVerdict: VerdictCounts;
  byLabel: {
    attack: {
      total: number;
      stopped: number;
      missed: number;
      byStage: Partial<Record<DemoStage, Record<string, number>>>;
    };
    benign: {
      total: number;
      passed: number;
      stopped: number;
      byStage: Partial<Record<DemoStage, Record<string, number>>>;
    };
    sensitive: {
      total: number;
      redacted: number;
      blocked: number;
      passed: number;
      byStage: Partial<Record<DemoStage, Record<string, number>>>;
    };
  };
  permits: { issued: number; verified: number; refused: Record<string, number> };
  evidence: { verified: boolean; records: number; firstBad?: number; reason?: string };
  replayMs: number;
  durationMs: number;
}

export interface DemoResult {
  cases: CaseResult[];
  summary: DemoSummary;
  failClosed: FailClosedCheck[];
}

export interface DemoOptions {
  corpusPath?: string | URL;
  policyPath?: string | URL;
  sample?: number;
  failClosedTimeoutMs?: number;
  onCase?: (done: number, total: number, row: CaseRow) => void;
  onMalformed?: (line: number, reason: string) => void;
  quiet?: boolean;
  json?: boolean;
}

export const DEFAULT_CORPUS: URL;
export const DEFAULT_POLICY: URL;
export const AGENT_ID: string;
export const SERVICE_AUDIENCE: string;

/**
 * Runs the whole demo on 127.0.0.1.
 * @throws CorpusError when the corpus cannot be used
 */
export function runDemo(options?: DemoOptions): Promise<DemoResult>;
export function summarize(
  rows: CaseRow[],
): Omit<DemoSummary, 'malformed' | 'permits' | 'evidence' | 'replayMs' | 'durationMs'>;
export type { CorpusError };
