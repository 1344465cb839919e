/**
 * An evidence record's `hash` (docs/dev-pdp.md: base64url SHA-256 over the UTF-8 of the record's RFC 8785
 * canonical JSON, `hash` and `sig` left out) without the generic canonicalizer for the common record: the
 * members' names are known, so their sorted order is fixed once, and their values are strings, integers,
 * booleans, `null` or arrays of strings, whose canonical form is `JSON.stringify`'s. Any other record (an
 * unknown member, an `audit` or `visibility` object, a string with an unpaired surrogate, a number that is
 * not a safe integer) is hashed by the SDK's `evidenceRecordHash`, so the bytes, and its refusals, are the
 * same in every case (a test compares them).
 * @packageDocumentation
 */
import { hash } from 'node:crypto';
import { evidenceRecordHash } from 'agent-pep/internal';

/** The members the fast path writes, in RFC 8785 order (UTF-16 code units: the default sort). */
const SIMPLE = Object.freeze(
  [
    'seq',
    'ts',
    'decisionId',
    'requestId',
    'agentId',
    'session',
    'stage',
    'verdict',
    'latches',
    'labels',
    'grants',
    'reason',
    'tool',
    'argsHash',
    'toolPin',
    'contentHash',
    'simulated',
    'escalationId',
    'outcome',
    'by',
    'note',
    'prevHash',
  ].sort(),
);
const KNOWN: ReadonlySet<string> = new Set([...SIMPLE, 'hash', 'sig']);

/** The canonical form of a simple value, or undefined when the value needs the generic canonicalizer. */
function simple(value: unknown): string | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? JSON.stringify(value) : undefined;
  if (typeof value === 'number') return Number.isSafeInteger(value) ? String(value) : undefined;
  if (typeof value === 'boolean' || value === null) return String(value);
  if (!Array.isArray(value)) return undefined;
  let out = '[';
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (typeof item !== 'string' || !item.isWellFormed()) return undefined;
    out += i === 0 ? JSON.stringify(item) : `,${JSON.stringify(item)}`;
  }
  return `${out}]`;
}

/** The canonical JSON of a simple record, or undefined when some member is not simple. */
function canonicalSimple(record: Readonly<Record<string, unknown>>): string | undefined {
  for (const key of Object.keys(record)) if (!KNOWN.has(key)) return undefined;
  let out = '{';
  for (const key of SIMPLE) {
    const value = record[key];
    if (value === undefined) continue;
    const text = simple(value);
    if (text === undefined) return undefined;
    out += out.length === 1 ? `"${key}":${text}` : `,"${key}":${text}`;
  }
  return `${out}}`;
}

/**
 * Computes a record's `hash`: the same string as the SDK's `evidenceRecordHash(record)`.
 * @throws TypeError as `evidenceRecordHash` does, for a record that cannot be canonicalized
 * @internal
 */
export function recordHash(record: Readonly<Record<string, unknown>>): string {
  const text = canonicalSimple(record);
  return text === undefined ? evidenceRecordHash(record) : hash('sha256', text, 'base64url');
}
