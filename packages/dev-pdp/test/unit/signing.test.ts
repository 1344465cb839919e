/**
 * The dev PDP's key file (`startDevPdp({ key: path })`, `agent-pep dev-pdp --key FILE`) is decoded by the
 * one JSON body decoder (src/wire/json.ts): a JWK that names a member twice reads one way here and
 * another way to the next parser, so it is refused with `err.option` 'key', as a JWK that is not JSON is.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSigningKey } from '../../src/signing.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-pep-signing-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }) as Record<string, string>;

async function keyFile(name: string, content: string | Buffer): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

async function rejection(path: string): Promise<{ option?: unknown; message: string }> {
  const error = await createSigningKey(path).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TypeError);
  return error as { option?: unknown; message: string };
}

describe('createSigningKey from a file', () => {
  it('reads a private JWK file', async () => {
    const key = await createSigningKey(await keyFile('ok.json', JSON.stringify(jwk)));
    expect(key.publicJwk.x).toBe(jwk.x);
  });

  it('a key file that names a member twice is refused (option key), never read as its last value', async () => {
    const twice = `{"kty":"OKP","crv":"Ed25519","x":"${jwk.x}","d":"${jwk.d}","d":"${jwk.d}"}`;
    const error = await rejection(await keyFile('twice.json', twice));
    expect(error.option).toBe('key');
    expect(error.message).toContain('the key file is neither a JWK (JSON) nor a PKCS#8 PEM');
  });

  it('a key file that is not JSON, or has a byte-order mark, is refused (option key)', async () => {
    expect((await rejection(await keyFile('bad.json', '{"kty":'))).option).toBe('key');
    expect((await rejection(await keyFile('bom.json', `\uFEFF${JSON.stringify(jwk)}`))).option).toBe('key');
  });
});
