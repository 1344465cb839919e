/**
 * What the CLI reads: `--keys FILE` and `--args JSON` go through the one JSON body decoder
 * (src/wire/json.ts `decodeJsonBody`): UTF-8 with no byte-order mark, one JSON text, I-JSON (RFC 7493).
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJsonOrUsage, jsonObjectFlag, readKeys } from '../../../src/cli/input.js';
import { UsageError } from '../../../src/cli/usage.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-pep-input-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: string | Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

/** The message of the UsageError `f` throws or rejects with. */
async function usageMessage(f: () => unknown): Promise<string> {
  const error = await Promise.resolve()
    .then(f)
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(error).toBeInstanceOf(UsageError);
  return (error as Error).message;
}

const JWK = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });

describe('readKeys', () => {
  it('reads a JWKS file, a single JWK file and a PEM file', async () => {
    const jwks = await file('jwks.json', JSON.stringify({ keys: [JWK] }));
    expect(await readKeys(jwks)).toEqual({ keys: [JWK] });
    expect(await readKeys(await file('jwk.json', JSON.stringify(JWK)))).toEqual({ keys: [JWK] });
    const pem = generateKeyPairSync('ed25519').publicKey.export({ format: 'pem', type: 'spki' }) as string;
    expect((await readKeys(await file('key.pem', pem))) as object).toHaveProperty('asymmetricKeyType', 'ed25519');
  });

  it('a keys file that is not JSON is a usage error naming the position, never the text', async () => {
    const path = await file('bad.json', '{"keys": [oops]}');
    expect(await usageMessage(() => readKeys(path))).toBe(
      `the keys file ${path} is not valid JSON at line 1, column 11 (position 10)`,
    );
  });

  it('a keys file with a byte-order mark is not JSON (RFC 8259: senders must not add one), as a hook event is not', async () => {
    const path = await file('bom.json', `\uFEFF${JSON.stringify({ keys: [JWK] })}`);
    expect(await usageMessage(() => readKeys(path))).toBe(
      `the keys file ${path} is not valid JSON at line 1, column 1 (position 0)`,
    );
  });

  it('a keys file that names a member twice is refused: it reads one way here and another way elsewhere', async () => {
    const twice = `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"${JWK.x}","x":"AAAA"}]}`;
    const path = await file('twice.json', twice);
    expect(await usageMessage(() => readKeys(path))).toBe(
      `the keys file ${path} names a member twice (I-JSON, RFC 7493)`,
    );
  });

  it('a keys file that is not UTF-8 is refused, never read with replacement characters', async () => {
    const path = await file('latin1.json', Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]));
    expect(await usageMessage(() => readKeys(path))).toBe(`the keys file ${path} is not valid JSON (it is not UTF-8)`);
  });

  it('a keys file that cannot be read names the system reason', async () => {
    const path = join(dir, 'missing.json');
    expect(await usageMessage(() => readKeys(path))).toBe(`cannot read the keys file ${path} (ENOENT)`);
  });
});

describe('jsonObjectFlag', () => {
  it('parses a JSON object', () => {
    expect(jsonObjectFlag('args', '{"a":1,"b":[true,null]}')).toEqual({ a: 1, b: [true, null] });
  });

  it.each([
    ['{"a":', '--args is not valid JSON at line 1, column 6 (position 5) (it ends early)'],
    ['[1]', '--args must be a JSON object'],
    // the shape is checked before I-JSON, as before the one decoder
    ['[{"a":1,"a":2}]', '--args must be a JSON object'],
    ['{"a":1,"a":2}', '--args names a member twice (I-JSON, RFC 7493)'],
    ['{"a":1e400}', '--args is not I-JSON (an unpaired surrogate, or a number beyond double range)'],
    ['{"a":"\\ud800"}', '--args is not I-JSON (an unpaired surrogate, or a number beyond double range)'],
    ['{"a":"\ud800"}', '--args is not I-JSON (an unpaired surrogate)'],
  ])('%s is refused: %s', async (value, message) => {
    expect(await usageMessage(() => jsonObjectFlag('args', value))).toBe(message);
  });
});

describe('decodeJsonOrUsage', () => {
  it('returns the value of an I-JSON text, of any shape without a shape check', () => {
    expect(decodeJsonOrUsage('x', Buffer.from('[1,"a"]'))).toEqual([1, 'a']);
  });
});
