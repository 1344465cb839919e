/**
 * Reading the agent-traffic corpus (examples/agent-traffic.jsonl, see examples/CORPUS.md): one JSON
 * object a line. Malformed lines are reported and skipped, never fatal; a file that cannot be read,
 * or that holds no usable case, is a {@link CorpusError}.
 * @module
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';

/** The five stages, in the order a turn crosses them. */
export const STAGES = Object.freeze(['input', 'context_egress', 'output', 'delivery', 'action']);
/** The corpus labels. */
export const LABELS = Object.freeze(['benign', 'attack', 'sensitive']);

/**
 * @typedef {object} CorpusCase
 * @property {string} id - `<source>-<nnnn>`
 * @property {'input'|'context_egress'|'output'|'delivery'|'action'} stage
 * @property {'benign'|'attack'|'sensitive'} label
 * @property {string} [tool] - action: the tool called; context_egress: the tool that produced the result
 * @property {Record<string, unknown>} [args] - action only: the call's JSON arguments
 * @property {string} [content] - text stages only: the text crossing the stage
 * @property {string} [note] - why the case has its label
 */

/**
 * @typedef {object} MalformedLine
 * @property {number} line - 1-based line number
 * @property {string} reason - what is wrong (never quotes the line)
 */

/** The corpus file cannot be used at all (missing, unreadable, not UTF-8, no valid case). */
export class CorpusError extends Error {
  /**
   * @param {string} message
   * @param {ErrorOptions} [options]
   */
  constructor(message, options) {
    super(message, options);
    this.name = 'CorpusError';
    /** Stable code. */
    this.code = 'corpus_invalid';
  }
}

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isPlainObject(value) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Checks one parsed line.
 * @param {unknown} value
 * @returns {string | undefined} the reason it is malformed, or undefined when it is a usable case
 */
export function caseProblem(value) {
  if (!isPlainObject(value)) return 'not a JSON object';
  if (typeof value.id !== 'string' || value.id.trim() === '') return 'id must be a non-empty string';
  if (typeof value.stage !== 'string' || !STAGES.includes(value.stage))
    return `stage must be one of ${STAGES.join(', ')}`;
  if (typeof value.label !== 'string' || !LABELS.includes(value.label))
    return `label must be one of ${LABELS.join(', ')}`;
  if (value.stage === 'action') {
    if (typeof value.tool !== 'string' || value.tool.trim() === '') return 'an action case needs a tool name';
    if (!isPlainObject(value.args)) return 'an action case needs args, a JSON object';
  } else if (typeof value.content !== 'string') {
    return 'a text case needs content, a string';
  }
  return undefined;
}

/**
 * Parses corpus text.
 * @param {string} text - JSON Lines
 * @returns {{ cases: CorpusCase[], malformed: MalformedLine[] }}
 */
export function parseCorpus(text) {
  /** @type {CorpusCase[]} */
  const cases = [];
  /** @type {MalformedLine[]} */
  const malformed = [];
  const seen = new Set();
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, index) => {
    if (raw.trim() === '') return;
    const line = index + 1;
    let value;
    try {
      value = JSON.parse(raw);
    } catch {
      malformed.push({ line, reason: 'not valid JSON' });
      return;
    }
    const problem = caseProblem(value);
    if (problem) {
      malformed.push({ line, reason: problem });
      return;
    }
    const c = /** @type {CorpusCase} */ (value);
    if (seen.has(c.id)) {
      malformed.push({ line, reason: 'duplicate id' });
      return;
    }
    seen.add(c.id);
    cases.push(c);
  });
  return { cases, malformed };
}

/**
 * Reads and parses a corpus file.
 * @param {string | URL} path
 * @returns {Promise<{ cases: CorpusCase[], malformed: MalformedLine[] }>}
 * @throws {CorpusError} when the file cannot be read, is not UTF-8, or holds no usable case
 */
export async function loadCorpus(path) {
  let bytes;
  try {
    bytes = await readFile(path);
  } catch (cause) {
    const code = /** @type {{ code?: string }} */ (cause).code ?? 'error';
    throw new CorpusError(`cannot read the corpus file ${String(path)} (${code})`, { cause });
  }
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (cause) {
    throw new CorpusError(`the corpus file ${String(path)} is not UTF-8 text`, { cause });
  }
  const parsed = parseCorpus(text);
  if (parsed.cases.length === 0) {
    throw new CorpusError(
      `the corpus file ${String(path)} holds no usable case (${parsed.malformed.length} malformed lines)`,
    );
  }
  return parsed;
}

/**
 * A deterministic sample that spans every stage/label group present: groups are visited in turn,
 * each in the order of the SHA-256 of the case ids, until `size` cases are taken. The result keeps
 * the corpus order.
 * @param {CorpusCase[]} cases
 * @param {number} size
 * @returns {CorpusCase[]}
 */
export function sampleCases(cases, size) {
  if (!(size > 0) || size >= cases.length) return [...cases];
  /** @type {Map<string, CorpusCase[]>} */
  const groups = new Map();
  for (const c of cases) {
    const key = `${c.stage}/${c.label}`;
    const group = groups.get(key) ?? [];
    group.push(c);
    groups.set(key, group);
  }
  const hash = (/** @type {string} */ id) => createHash('sha256').update(id).digest('hex');
  const queues = [...groups.keys()]
    .sort()
    .map((key) => [...(groups.get(key) ?? [])].sort((a, b) => (hash(a.id) < hash(b.id) ? -1 : 1)));
  const picked = new Set();
  while (picked.size < size) {
    for (const queue of queues) {
      const next = queue.shift();
      if (next && picked.size < size) picked.add(next);
    }
  }
  return cases.filter((c) => picked.has(c));
}
