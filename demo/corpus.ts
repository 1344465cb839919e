/**
 * Reading the agent-traffic corpus (demo/agent-traffic.jsonl, see demo/CORPUS.md): one JSON object a
 * line. Malformed lines are reported and skipped, never fatal; a file that cannot be read, or that
 * holds no usable case, is a {@link CorpusError}.
 * @module
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Stage } from 'agent-pep';

/** The five stages, in the order a turn crosses them. */
export const STAGES: readonly Stage[] = Object.freeze(['input', 'context_egress', 'output', 'delivery', 'action']);

/** What a case is: traffic that should pass, an attack that should be stopped, or text to redact. */
export type Label = 'benign' | 'attack' | 'sensitive';

/** The corpus labels. */
export const LABELS: readonly Label[] = Object.freeze(['benign', 'attack', 'sensitive']);

/** One corpus line. */
export interface CorpusCase {
  /** `<source>-<nnnn>` */
  id: string;
  stage: Stage;
  label: Label;
  /** action: the tool called; context_egress: the tool that produced the result. */
  tool?: string;
  /** action only: the call's JSON arguments. */
  args?: Record<string, unknown>;
  /** text stages only: the text crossing the stage. */
  content?: string;
  /** Why the case has its label. */
  note?: string;
}

/** A line that was skipped. */
export interface MalformedLine {
  /** 1-based line number. */
  line: number;
  /** What is wrong (never quotes the line). */
  reason: string;
}

/** A parsed corpus: the usable cases in file order, and the lines skipped. */
export interface Corpus {
  cases: CorpusCase[];
  malformed: MalformedLine[];
}

/** The corpus file cannot be used at all (missing, unreadable, not UTF-8, no valid case). */
export class CorpusError extends Error {
  /** Stable code. */
  readonly code = 'corpus_invalid';

  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CorpusError';
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

export const isOneOf = <T extends string>(list: readonly T[], value: unknown): value is T =>
  typeof value === 'string' && (list as readonly string[]).includes(value);

/**
 * Checks one parsed line.
 * @returns the reason it is malformed, or undefined when it is a usable case
 */
export function caseProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'not a JSON object';
  if (typeof value.id !== 'string' || value.id.trim() === '') return 'id must be a non-empty string';
  return stepProblem(value);
}

/**
 * Checks one step of traffic: a case without its id, or a step of a session (demo/sessions.ts).
 * @returns the reason it is malformed, or undefined when it is usable
 */
export function stepProblem(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'not a JSON object';
  if (!isOneOf(STAGES, value.stage)) return `stage must be one of ${STAGES.join(', ')}`;
  if (!isOneOf(LABELS, value.label)) return `label must be one of ${LABELS.join(', ')}`;
  if (value.stage === 'action') {
    if (typeof value.tool !== 'string' || value.tool.trim() === '') return 'an action case needs a tool name';
    if (!isPlainObject(value.args)) return 'an action case needs args, a JSON object';
  } else if (typeof value.content !== 'string') {
    return 'a text case needs content, a string';
  }
  return undefined;
}

/** Parses corpus text (JSON Lines). */
export function parseCorpus(text: string): Corpus {
  const { items, malformed } = parseJsonLines<CorpusCase>(text, caseProblem);
  return { cases: items, malformed };
}

/**
 * Reads a JSON Lines file as UTF-8 text.
 * @param file - what the file is called in the error (`corpus`, `session`); default `corpus`
 * @throws CorpusError when the file cannot be read or is not UTF-8
 */
export async function readJsonLines(path: string | URL, file = 'corpus'): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (cause) {
    const code = (cause as { code?: string }).code ?? 'error';
    throw new CorpusError(`cannot read the ${file} file ${String(path)} (${code})`, { cause });
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (cause) {
    throw new CorpusError(`the ${file} file ${String(path)} is not UTF-8 text`, { cause });
  }
}

/**
 * Parses JSON Lines text into the usable items, in file order, and the lines skipped: a line that
 * is not JSON, that `problem` finds fault with, or whose `id` was seen before.
 */
export function parseJsonLines<T extends { id: string }>(
  text: string,
  problem: (value: unknown) => string | undefined,
): { items: T[]; malformed: MalformedLine[] } {
  const items: T[] = [];
  const malformed: MalformedLine[] = [];
  const seen = new Set<string>();
  text.split(/\r?\n/).forEach((raw, index) => {
    if (raw.trim() === '') return;
    const line = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      malformed.push({ line, reason: 'not valid JSON' });
      return;
    }
    const why = problem(value);
    if (why) {
      malformed.push({ line, reason: why });
      return;
    }
    const item = value as T;
    if (seen.has(item.id)) {
      malformed.push({ line, reason: 'duplicate id' });
      return;
    }
    seen.add(item.id);
    items.push(item);
  });
  return { items, malformed };
}

/**
 * Reads a JSON Lines file and parses it with `problem` (see {@link parseJsonLines}).
 * @param what - what one item is called in the error (`case`, `session`)
 * @throws CorpusError when the file cannot be read, is not UTF-8, or holds no usable item
 */
export async function loadJsonLines<T extends { id: string }>(
  path: string | URL,
  problem: (value: unknown) => string | undefined,
  what: string,
): Promise<{ items: T[]; malformed: MalformedLine[] }> {
  const file = what === 'case' ? 'corpus' : what;
  const parsed = parseJsonLines<T>(await readJsonLines(path, file), problem);
  if (parsed.items.length === 0) {
    throw new CorpusError(
      `the ${file} file ${String(path)} holds no usable ${what} (${parsed.malformed.length} malformed lines)`,
    );
  }
  return parsed;
}

/**
 * Reads and parses a corpus file.
 * @throws CorpusError when the file cannot be read, is not UTF-8, or holds no usable case
 */
export async function loadCorpus(path: string | URL): Promise<Corpus> {
  const { items, malformed } = await loadJsonLines<CorpusCase>(path, caseProblem, 'case');
  return { cases: items, malformed };
}

/**
 * A deterministic sample that spans every stage/label group present: groups are visited in turn,
 * each in the order of the SHA-256 of the case ids, until `size` cases are taken. The result keeps
 * the corpus order.
 */
export function sampleCases(cases: readonly CorpusCase[], size: number): CorpusCase[] {
  if (!(size > 0) || size >= cases.length) return [...cases];
  const groups = new Map<string, CorpusCase[]>();
  for (const c of cases) {
    const key = `${c.stage}/${c.label}`;
    const group = groups.get(key) ?? [];
    group.push(c);
    groups.set(key, group);
  }
  const hash = (id: string) => createHash('sha256').update(id).digest('hex');
  const queues = [...groups.keys()]
    .sort()
    .map((key) => [...(groups.get(key) ?? [])].sort((a, b) => (hash(a.id) < hash(b.id) ? -1 : 1)));
  const picked = new Set<CorpusCase>();
  while (picked.size < size) {
    for (const queue of queues) {
      const next = queue.shift();
      if (next && picked.size < size) picked.add(next);
    }
  }
  return cases.filter((c) => picked.has(c));
}
