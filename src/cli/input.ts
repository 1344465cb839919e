/**
 * What several commands read: `--keys URL|FILE` (`verify-permit`, `evidence verify`), a JSON object
 * flag (`--args`), and stdin. A file that cannot be read or parsed is a usage error naming the system's
 * reason or the JSON position.
 * @internal
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { JSONWebKeySet } from 'jose';
import { decodeJsonBody } from '../wire/json.js';
import type { CliIo } from './io.js';
import { jsonPosition, systemReason, UsageError } from './usage.js';

/** Where keys come from, as the verifiers take them. */
export type KeySource = string | JSONWebKeySet | KeyObject;

/**
 * Reads `--keys`: an `http(s)` URL of a JWKS, or a file holding a JWKS, one public JWK, or a PEM
 * public key (SPKI). A JSON file is decoded by the one JSON body decoder ({@link decodeJsonOrUsage}).
 * @throws UsageError naming the file and the reason
 */
export async function readKeys(value: string | undefined): Promise<KeySource> {
  if (value === undefined) throw new UsageError('--keys URL|FILE is required');
  if (/^https?:\/\//i.test(value)) return value;
  const what = `the keys file ${value}`;
  const bytes = await readFileOrUsage(value, what);
  const text = bytes.toString('utf8');
  if (text.trimStart().startsWith('-----BEGIN')) {
    try {
      const key = createPublicKey(text);
      return key;
    } catch {
      throw new UsageError(`the keys file ${value} is not a PEM public key`);
    }
  }
  const parsed = decodeJsonOrUsage(what, bytes);
  if (typeof parsed === 'object' && parsed !== null) {
    if (Array.isArray((parsed as { keys?: unknown }).keys)) return parsed as JSONWebKeySet;
    if (typeof (parsed as { kty?: unknown }).kty === 'string') return { keys: [parsed] } as JSONWebKeySet;
  }
  throw new UsageError(`the keys file ${value} holds neither a JWKS ({ "keys": [...] }) nor a JWK`);
}

/**
 * The bytes of the file at `path`.
 * @param what - how the usage error names the file: `the keys file k.json`
 * @throws UsageError `cannot read <what> (<the system's reason>)`
 */
export async function readFileOrUsage(path: string, what: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new UsageError(`cannot read ${what} (${systemReason(error)})`);
  }
}

/**
 * Decodes a JSON file or flag with the one JSON body decoder (`decodeJsonBody`, src/wire/json.ts): UTF-8
 * with no byte-order mark, one JSON text, I-JSON (RFC 7493): a member named twice reads one way here
 * (the last wins) and may read another way elsewhere, so it is refused, as the hook and `evidence
 * verify` refuse it (docs/cli.md).
 * @param what - how a usage error names the input: `the policy file p.json`, `--args`
 * @param bytes - the input as read
 * @param shape - when given, checked once the text parsed and before the I-JSON rules: a usage message
 *   for a value of the wrong shape, or undefined
 * @returns the parsed value
 * @throws UsageError naming `what` and the problem (the JSON position, never quoting the input)
 */
export function decodeJsonOrUsage(
  what: string,
  bytes: Uint8Array,
  shape?: (value: unknown) => string | undefined,
): unknown {
  const d = decodeJsonBody(bytes);
  if (!d.ok && d.problem === 'utf8') throw new UsageError(`${what} is not valid JSON (it is not UTF-8)`);
  if (!d.ok && d.problem === 'json') throw new UsageError(`${what} is not valid JSON${jsonPosition(d.text ?? '')}`);
  const wrong = shape?.(d.value);
  if (wrong !== undefined) throw new UsageError(wrong);
  if (!d.ok && d.problem === 'duplicate') throw new UsageError(`${what} names a member twice (I-JSON, RFC 7493)`);
  if (!d.ok) {
    throw new UsageError(`${what} is not I-JSON (an unpaired surrogate, or a number beyond double range)`);
  }
  return d.value;
}

/** Reads all of `stdin` (the command's, `io.stdin`) as UTF-8. */
export async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Parses a flag that must be an I-JSON object (`--args`): a member named twice reads one way here (the
 * last wins) and may read another way to the service, so it is refused, as the hook and `evidence
 * verify` refuse it (RFC 7493; docs/cli.md).
 * @throws UsageError naming the flag and the JSON position, a member named twice, or a value that is
 *   not I-JSON (an unpaired surrogate, a number beyond double range); never quoting the value
 */
export function jsonObjectFlag(name: string, value: string): Record<string, unknown> {
  // a lone surrogate has no UTF-8 form (argv never holds one: the OS gives bytes)
  if (!value.isWellFormed()) throw new UsageError(`--${name} is not I-JSON (an unpaired surrogate)`);
  const notObject = (v: unknown) =>
    typeof v !== 'object' || v === null || Array.isArray(v) ? `--${name} must be a JSON object` : undefined;
  return decodeJsonOrUsage(`--${name}`, Buffer.from(value, 'utf8'), notObject) as Record<string, unknown>;
}

/**
 * Reads the PDP API key from the environment variable `--api-key-env` names (`check`, `hook`).
 * @param name the variable's name, as given (at most 60 characters of it are echoed)
 * @param env the command's environment (`io.env`)
 * @returns the key, never empty
 * @throws UsageError when the variable is unset or empty, saying what to do instead
 */
export function apiKeyFromEnv(name: string, env: CliIo['env']): string {
  const key = env[name];
  if (key === undefined || key === '') {
    throw new UsageError(
      `--api-key-env: the environment variable ${name.slice(0, 60)} is not set: set it to the PDP's API key, or leave --api-key-env out for a PDP that needs none`,
    );
  }
  return key;
}

/**
 * The `--protocol` flag (`check`, `hook`): `agent-pep` (the default) or `authzen` (AuthZEN 1.0).
 * @throws UsageError for any other value (at most 40 characters of it are echoed)
 */
export function protocolFlag(value: string | undefined): 'agent-pep' | 'authzen' {
  if (value === undefined || value === 'agent-pep' || value === 'authzen') return value ?? 'agent-pep';
  throw new UsageError(`--protocol must be agent-pep or authzen, not ${JSON.stringify(value.slice(0, 40))}`);
}
