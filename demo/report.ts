/**
 * Rendering the demo for people: the summary, the per-case lines (`--verbose`), the progress line
 * and the fail-closed checks. Content is shown sanitized: one line, control characters removed,
 * truncated.
 * @module
 */
import type { Stage } from 'agent-pep';
import type { CaseRow, DemoResult } from './replay.js';

/** One line, printable, at most `max` characters. */
export function excerpt(text: string, max = 40): string {
  const line = text
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]+/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
  const chars = [...line];
  return chars.length <= max ? line : `${chars.slice(0, max - 3).join('')}...`;
}

const pad = (text: string, width: number): string => {
  const chars = [...text];
  if (chars.length < width) return text + ' '.repeat(width - chars.length);
  return `${chars.slice(0, width - 2).join('')}~ `;
};

/** What happened to the case, in words. */
function outcome(row: CaseRow): string {
  if (row.stage === 'action') return row.executed ? 'ran' : 'not run';
  if (row.verdict === 'BLOCK') return 'stopped';
  if (row.verdict === 'ESCALATE') return 'held';
  return row.redacted ? 'redacted' : 'passed';
}

/**
 * A policy miss, when there is one: an attack that got through, a benign case stopped, or sensitive
 * text passed unchanged.
 */
function miss(row: CaseRow): string {
  const stopped = row.verdict === 'BLOCK' || row.verdict === 'ESCALATE';
  if (row.label === 'attack' && !stopped) return '<- attack missed';
  if (row.label === 'benign' && stopped) return row.verdict === 'BLOCK' ? '<- benign stopped' : '<- benign held';
  if (row.label === 'sensitive' && !stopped && !row.redacted) return '<- not redacted';
  return '';
}

const COLUMNS: readonly (readonly [string, number])[] = [
  ['id', 16],
  ['stage', 15],
  ['label', 10],
  ['tool / content', 42],
  ['verdict', 9],
  ['deciding latch', 32],
  ['result', 9],
];

/** A table's header lines: the column names, padded to their widths, and a rule under them. */
export function headerOf(columns: readonly (readonly [string, number])[]): string {
  const head = columns.map(([name, width]) => pad(name, width)).join('');
  return [head, '-'.repeat(head.length + 16)].join('\n');
}

/** The per-case table's header lines. */
export function tableHeader(): string {
  return headerOf(COLUMNS);
}

/** One per-case line. */
export function tableRow(row: CaseRow): string {
  const what = row.stage === 'action' ? (row.tool ?? '') : `"${excerpt(row.content ?? '', 38)}"`;
  const latch = row.code ?? row.decidingLatch ?? '-';
  const cells = [row.id, row.stage, row.label, what, row.verdict, latch, outcome(row)];
  return `${cells.map((cell, i) => pad(String(cell), COLUMNS[i]?.[1] ?? 10)).join('')}${miss(row)}`.trimEnd();
}

/** The progress line while replaying: `[done/total] stage id` (`session` for a whole session). */
export function progressText(done: number, total: number, row: { stage: string; id: string }): string {
  return `[${done}/${total}] ${row.stage} ${excerpt(row.id, 40)}`;
}

const frac = (n: number, total: number): string => (total === 0 ? '-' : `${n}/${total}`);

/**
 * The summary: counts by stage and verdict, the label x stage table, permits and evidence, the
 * policy misses (see `--verbose`).
 */
export function summaryText(result: DemoResult): string {
  const { summary } = result;
  const stages = Object.keys(summary.byStage) as Stage[];
  const out: string[] = [];
  out.push(
    `Replayed ${summary.total} cases in ${(summary.replayMs / 1000).toFixed(1)} s` +
      (summary.malformed ? ` (${summary.malformed} malformed lines skipped)` : '') +
      `; ${summary.executed} tool calls ran.`,
    '',
    'By stage and verdict',
    `  ${pad('stage', 16)}${['total', 'ALLOW', 'WARN', 'BLOCK', 'ESCALATE'].map((h) => pad(h, 10)).join('')}`,
  );
  for (const s of stages) {
    const c = summary.byStage[s];
    if (c.total === 0) continue;
    out.push(
      `  ${pad(s, 16)}${[c.total, c.ALLOW, c.WARN, c.BLOCK, c.ESCALATE].map((n) => pad(String(n), 10)).join('')}`,
    );
  }
  const v = summary.byVerdict;
  out.push(
    `  ${pad('all', 16)}${[summary.total, v.ALLOW, v.WARN, v.BLOCK, v.ESCALATE].map((n) => pad(String(n), 10)).join('')}`,
    '',
    'By label (attack: stopped = BLOCK or ESCALATE; benign: passed = ALLOW or WARN; sensitive: redacted or blocked)',
    `  ${pad('stage', 16)}${pad('attacks stopped', 18)}${pad('benign passed', 16)}${pad('sensitive redacted+blocked', 28)}`,
  );
  const { attack, benign, sensitive } = summary.byLabel;
  const n = (counts: Record<string, number> | undefined, key: string): number => counts?.[key] ?? 0;
  for (const s of stages) {
    const a = attack.byStage[s];
    const b = benign.byStage[s];
    const x = sensitive.byStage[s];
    if (!a && !b && !x) continue;
    out.push(
      `  ${pad(s, 16)}${pad(a ? frac(n(a, 'stopped'), a.total) : '-', 18)}${pad(b ? frac(n(b, 'passed'), b.total) : '-', 16)}${pad(x ? frac(n(x, 'redacted') + n(x, 'blocked'), x.total) : '-', 28)}`,
    );
  }
  out.push(
    `  ${pad('all', 16)}${pad(frac(attack.stopped, attack.total), 18)}${pad(frac(benign.passed, benign.total), 16)}${pad(frac(sensitive.redacted + sensitive.blocked, sensitive.total), 28)}`,
    '',
  );
  const refused = Object.entries(summary.permits.refused)
    .map(([code, count]) => `${code} ${count}`)
    .join(', ');
  out.push(
    `Permits: ${summary.permits.issued} issued by the PDP, ${summary.permits.verified} verified and used by the tool service` +
      (refused ? `, refused: ${refused}` : ''),
    `Interceptor: '${summary.interceptor.name}' stamped a trace id into ${summary.interceptor.stamped} tool calls before the PDP saw them; every permit binds the stamped args`,
    summary.evidence.verified
      ? `Evidence: ${summary.evidence.records} records, hash chain and signatures verified`
      : `Evidence: NOT VERIFIED at record ${summary.evidence.firstBad} (${summary.evidence.reason})`,
    `Policy misses: ${attack.missed} attacks not stopped, ${benign.stopped} benign cases stopped or held, ` +
      `${sensitive.passed} sensitive texts passed unchanged (--verbose shows every case).`,
  );
  return out.join('\n');
}

/** The fail-closed checks, one line each, and the verdict line that ends the output. */
export function failClosedText(result: DemoResult): string {
  const { failClosed } = result;
  const out = ['Fail-closed checks'];
  for (const c of failClosed) out.push(`  ${c.passed ? 'pass' : 'FAIL'}  ${pad(c.check, 30)}${c.detail}`);
  const failed = failClosed.filter((c) => !c.passed).length;
  out.push(
    '',
    failed === 0
      ? `All ${failClosed.length} fail-closed checks held.`
      : `${failed} of ${failClosed.length} fail-closed checks FAILED.`,
  );
  return out.join('\n');
}
