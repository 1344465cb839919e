/**
 * What several commands read: `--keys URL|FILE` (`verify-permit`, `evidence verify`), a JSON object
 * flag (`--args`), and stdin. A file that cannot be read or parsed is a usage error naming the system's
 * reason or the JSON position.
 * @internal
 */
import { createPublicKey } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ijsonProblem } from '../wire/json.js';
import { jsonPosition, systemReason, UsageError } from './usage.js';
/**
 * Reads `--keys`: an `http(s)` URL of a JWKS, or a file holding a JWKS, one public JWK, or a PEM
 * public key (SPKI).
 * @throws UsageError naming the file and the reason
 */
export async function readKeys(value) {
    if (value === undefined)
        throw new UsageError('--keys URL|FILE is required');
    if (/^https?:\/\//i.test(value))
        return value;
    let text;
    try {
        text = await readFile(value, 'utf8');
    }
    catch (error) {
        throw new UsageError(`cannot read the keys file ${value} (${systemReason(error)})`);
    }
    if (text.trimStart().startsWith('-----BEGIN')) {
        try {
            const key = createPublicKey(text);
            return key;
        }
        catch {
            throw new UsageError(`the keys file ${value} is not a PEM public key`);
        }
    }
    let parsed;
    try {
        parsed = JSON.parse(text);
    }
    catch {
        throw new UsageError(`the keys file ${value} is not valid JSON${jsonPosition(text)}`);
    }
    if (typeof parsed === 'object' && parsed !== null) {
        if (Array.isArray(parsed.keys))
            return parsed;
        if (typeof parsed.kty === 'string')
            return { keys: [parsed] };
    }
    throw new UsageError(`the keys file ${value} holds neither a JWKS ({ "keys": [...] }) nor a JWK`);
}
/** Reads all of `stdin` (the command's, `io.stdin`) as UTF-8. */
export async function readStdin(stdin) {
    const chunks = [];
    for await (const chunk of stdin)
        chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    return Buffer.concat(chunks).toString('utf8');
}
/**
 * Parses a flag that must be an I-JSON object (`--args`): a member named twice reads one way here (the
 * last wins) and may read another way to the service, so it is refused, as the hook and `evidence
 * verify` refuse it (RFC 7493; docs/cli.md).
 * @throws UsageError naming the flag and the JSON position, a member named twice, or a value that is
 *   not I-JSON (an unpaired surrogate, a number beyond double range); never quoting the value
 */
export function jsonObjectFlag(name, value) {
    let parsed;
    try {
        parsed = JSON.parse(value);
    }
    catch {
        throw new UsageError(`--${name} is not valid JSON${jsonPosition(value)}`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
        throw new UsageError(`--${name} must be a JSON object`);
    }
    const problem = ijsonProblem(value, parsed);
    if (problem === 'duplicate')
        throw new UsageError(`--${name} names a member twice (I-JSON, RFC 7493)`);
    if (problem === 'value') {
        throw new UsageError(`--${name} is not I-JSON (an unpaired surrogate, or a number beyond double range)`);
    }
    return parsed;
}
/**
 * Reads the PDP API key from the environment variable `--api-key-env` names (`check`, `hook`).
 * @param name the variable's name, as given (at most 60 characters of it are echoed)
 * @param env the command's environment (`io.env`)
 * @returns the key, never empty
 * @throws UsageError when the variable is unset or empty, saying what to do instead
 */
export function apiKeyFromEnv(name, env) {
    const key = env[name];
    if (key === undefined || key === '') {
        throw new UsageError(`--api-key-env: the environment variable ${name.slice(0, 60)} is not set: set it to the PDP's API key, or leave --api-key-env out for a PDP that needs none`);
    }
    return key;
}
/**
 * The `--protocol` flag (`check`, `hook`): `agent-pep` (the default) or `authzen` (AuthZEN 1.0).
 * @throws UsageError for any other value (at most 40 characters of it are echoed)
 */
export function protocolFlag(value) {
    if (value === undefined || value === 'agent-pep' || value === 'authzen')
        return value ?? 'agent-pep';
    throw new UsageError(`--protocol must be agent-pep or authzen, not ${JSON.stringify(value.slice(0, 40))}`);
}
