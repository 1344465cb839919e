/** Types of examples/demo/corpus.js, for TypeScript callers (the tests). */
export interface CorpusCase {
  id: string;
  stage: 'input' | 'context_egress' | 'output' | 'delivery' | 'action';
  label: 'benign' | 'attack' | 'sensitive';
  tool?: string;
  args?: Record<string, unknown>;
  content?: string;
  note?: string;
}
export interface MalformedLine {
  line: number;
  reason: string;
}
export const STAGES: readonly string[];
export const LABELS: readonly string[];
export class CorpusError extends Error {
  readonly code: 'corpus_invalid';
}
export function caseProblem(value: unknown): string | undefined;
export function parseCorpus(text: string): { cases: CorpusCase[]; malformed: MalformedLine[] };
export function loadCorpus(path: string | URL): Promise<{ cases: CorpusCase[]; malformed: MalformedLine[] }>;
export function sampleCases(cases: CorpusCase[], size: number): CorpusCase[];
