/**
 * Reading the session corpus (demo/agent-sessions.jsonl, see demo/CORPUS.md, section Sessions): one
 * agent run a line, its steps in the order they happen. Malformed lines are reported and skipped,
 * never fatal; a file that cannot be read, or that holds no usable session, is a {@link CorpusError}.
 * @module
 */
import {
  type CorpusCase,
  isOneOf,
  isPlainObject,
  loadJsonLines,
  type MalformedLine,
  parseJsonLines,
  stepProblem,
} from './corpus.js';

/** What a session is: `attack` when any of its steps is an attack, else `benign`. */
export type SessionLabel = 'attack' | 'benign';

/** The session labels. */
export const SESSION_LABELS: readonly SessionLabel[] = Object.freeze(['attack', 'benign']);

/** One step of a session: a case without its id (the stage, label, and tool + args or content). */
export type SessionStep = Omit<CorpusCase, 'id' | 'note'>;

/** One line of the session corpus. */
export interface AgentSession {
  /** `<source>-s<nnn>` */
  id: string;
  label: SessionLabel;
  /** In the order they happen (at least one). */
  steps: SessionStep[];
  /** Where the session comes from and, for attacks, what the attack was. */
  note?: string;
}

/** A parsed session corpus: the usable sessions in file order, and the lines skipped. */
export interface SessionCorpus {
  sessions: AgentSession[];
  malformed: MalformedLine[];
}

/**
 * Checks one parsed line.
 * @returns the reason it is malformed (naming the step, 1-based), or undefined when it is usable
 */
export function sessionProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'not a JSON object';
  if (typeof value.id !== 'string' || value.id.trim() === '') return 'id must be a non-empty string';
  if (!isOneOf(SESSION_LABELS, value.label)) return `label must be one of ${SESSION_LABELS.join(', ')}`;
  if (!Array.isArray(value.steps) || value.steps.length === 0) return 'steps must be a non-empty array';
  for (const [i, step] of value.steps.entries()) {
    const problem = stepProblem(step);
    if (problem) return `step ${i + 1}: ${problem}`;
  }
  const attack = value.steps.some((s: { label?: unknown }) => s.label === 'attack');
  if (attack !== (value.label === 'attack')) return 'label must be attack exactly when a step is an attack';
  return undefined;
}

/** Parses session corpus text (JSON Lines). */
export function parseSessions(text: string): SessionCorpus {
  const { items, malformed } = parseJsonLines<AgentSession>(text, sessionProblem);
  return { sessions: items, malformed };
}

/**
 * Reads and parses a session corpus file.
 * @throws CorpusError when the file cannot be read, is not UTF-8, or holds no usable session
 */
export async function loadSessions(path: string | URL): Promise<SessionCorpus> {
  const { items, malformed } = await loadJsonLines<AgentSession>(path, sessionProblem, 'session');
  return { sessions: items, malformed };
}
