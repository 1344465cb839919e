/**
 * Rendering a session replay for people: the summary, one line per session (`--verbose`), and the
 * headline of the default run (cases and sessions in a few lines).
 * @module
 */
import type { DemoResult } from './replay.js';
import { excerpt, headerOf } from './report.js';
import { type SessionReplayResult, type SessionRow, type SessionSummary, sessionOutcome } from './session-replay.js';

const pct = (p: number | null): string => (p === null ? '-' : `${p.toFixed(1)}%`);
const pad = (text: string, width: number): string =>
  text.length < width ? text + ' '.repeat(width - text.length) : `${text} `;

/** The three figures of a session replay, in one line. */
export function sessionFigures(summary: SessionSummary): string {
  const { attack, benign, percent } = summary;
  return (
    `attack sessions stopped ${attack.stopped}/${attack.total} (${pct(percent.attackStopped)}); ` +
    `benign with a BLOCK ${benign.blocked}/${benign.total} (${pct(percent.benignBlocked)}); ` +
    `benign held for review ${benign.held}/${benign.total} (${pct(percent.benignHeld)})`
  );
}

/** The ids of the sessions the policy missed: attacks not stopped, benign sessions blocked or held. */
export function sessionMisses(rows: readonly SessionRow[]): { missed: string[]; blocked: string[]; held: string[] } {
  const out = { missed: [] as string[], blocked: [] as string[], held: [] as string[] };
  for (const row of rows) {
    const o = sessionOutcome(row);
    if (row.label === 'attack' && !o.stopped) out.missed.push(row.id);
    if (row.label === 'benign' && o.blocked) out.blocked.push(row.id);
    if (row.label === 'benign' && o.held) out.held.push(row.id);
  }
  return out;
}

const sessions = (n: number, label: string): string => `${n} ${label} session${n === 1 ? '' : 's'}`;

const list = (ids: readonly string[], max = 6): string =>
  ids.length <= max ? ids.join(', ') : `${ids.slice(0, max).join(', ')}, ... (${ids.length - max} more)`;

/** The summary of a session replay. */
export function sessionSummaryText(result: SessionReplayResult & { rows: readonly SessionRow[] }): string {
  const { summary } = result;
  const { attack, benign, byVerdict } = summary;
  const misses = sessionMisses(result.rows);
  const out = [
    `Replayed ${summary.sessions} sessions (${summary.steps} steps) in ${(summary.replayMs / 1000).toFixed(1)} s, ` +
      `each under its own session id` +
      (summary.malformed ? ` (${summary.malformed} malformed lines skipped)` : '') +
      '.',
    '',
    `  ${pad('attack sessions stopped', 30)}${pad(`${attack.stopped}/${attack.total}`, 8)}${pad(pct(summary.percent.attackStopped), 8)}` +
      `at the first attack step ${attack.stoppedAtFirstAttackStep}, every attack tool call ${attack.everyAttackCallStopped}; ` +
      `attack tool calls let run ${attack.attackCallsRun}/${attack.attackCalls} (the recording replays on after a stop)`,
    `  ${pad('benign sessions with a BLOCK', 30)}${pad(`${benign.blocked}/${benign.total}`, 8)}${pct(summary.percent.benignBlocked)}`,
    `  ${pad('benign sessions held', 30)}${pad(`${benign.held}/${benign.total}`, 8)}${pad(pct(summary.percent.benignHeld), 8)}` +
      'some step ESCALATE: held for a person, not lost',
    `  ${pad('steps by verdict', 30)}ALLOW ${byVerdict.ALLOW}, WARN ${byVerdict.WARN}, BLOCK ${byVerdict.BLOCK}, ESCALATE ${byVerdict.ESCALATE}`,
    '',
    `Policy misses: ${sessions(misses.missed.length, 'attack')} not stopped${misses.missed.length ? ` (${list(misses.missed)})` : ''}, ` +
      `${sessions(misses.blocked.length, 'benign')} with a BLOCK${misses.blocked.length ? ` (${list(misses.blocked)})` : ''}, ` +
      `${misses.held.length} held${misses.held.length ? ` (${list(misses.held)})` : ''} (--verbose shows every session).`,
  ];
  return out.join('\n');
}

const COLUMNS: readonly (readonly [string, number])[] = [
  ['session', 18],
  ['label', 8],
  ['steps', 7],
  ['first BLOCK/ESCALATE', 74],
  ['labels at the end', 24],
  ['grants made', 40],
];

/** The per-session table's header lines. */
export function sessionTableHeader(): string {
  return headerOf(COLUMNS);
}

/** One per-session line: where it was first stopped (step, stage, tool, verdict, latch) and what became of it. */
export function sessionTableRow(row: SessionRow): string {
  const o = sessionOutcome(row);
  const first = o.firstStop >= 0 ? row.steps[o.firstStop] : undefined;
  const where = first
    ? `${o.firstStop + 1} ${first.stage}${first.tool ? ` ${excerpt(first.tool, 32)}` : ''} ${first.verdict} ${first.code ?? first.decidingLatch ?? '-'}`
    : '-';
  const labels = row.steps.at(-1)?.sessionLabels.join(',') || '-';
  let mark = '';
  if (row.label === 'attack') mark = o.stopped ? '' : '<- attack missed';
  else if (o.blocked) mark = '<- benign blocked';
  else if (o.held) mark = '<- benign held';
  const grants = row.grants.join(',') || '-';
  const cells = [
    row.id,
    row.label,
    String(row.steps.length),
    excerpt(where, 72),
    excerpt(labels, 22),
    excerpt(grants, 38),
  ];
  return `${cells.map((cell, i) => pad(cell, COLUMNS[i]?.[1] ?? 10)).join('')}${mark}`.trimEnd();
}

/** The headline of the default run: cases, sessions and the fail-closed checks, a line each. */
export function headlineText(
  cases: DemoResult,
  sessions: readonly (SessionReplayResult & { file: string })[],
  policy: string,
): string {
  const { attack, benign, sensitive } = cases.summary.byLabel;
  const benignBlocked = cases.cases.filter((c) => c.label === 'benign' && c.verdict === 'BLOCK').length;
  const failed = cases.failClosed.filter((c) => !c.passed);
  return [
    `agent-pep demo: ${policy} on agent traffic from InjecAgent, AgentDojo, tau-bench and AgentDyn`,
    '',
    `  ${pad(`${cases.summary.total} single steps`, 22)}attacks stopped ${attack.stopped}/${attack.total}; ` +
      `benign blocked ${benignBlocked}/${benign.total}, held ${benign.stopped - benignBlocked}/${benign.total}; ` +
      `sensitive redacted or blocked ${sensitive.redacted + sensitive.blocked}/${sensitive.total}`,
    ...sessions.map(
      (run) =>
        `  ${pad(`${run.summary.sessions} ${(run.file.split('/').at(-1) ?? '').replace(/\.jsonl$/, '')}`, 22)}${sessionFigures(run.summary)}`,
    ),
    `  ${pad('fail-closed', 22)}` +
      (failed.length === 0
        ? `all ${cases.failClosed.length} checks held (PDP hung or down: BLOCK, nothing ran; permits replayed or altered: refused; evidence verified)`
        : `${failed.length} of ${cases.failClosed.length} checks FAILED: ${failed.map((c) => c.check).join(', ')}`),
    '',
    '--verbose shows the tables, every case and every session; --json the whole result.',
  ].join('\n');
}
