/**
 * `agent-pep verify-permit` (CONTRACT.md section 11) with permits the dev PDP minted: the claims and exit
 * 0, or the `PermitVerificationError` code and exit 1; no replay claim unless `--consume` (then in the
 * Redis store the services share); usage errors exit 2. The command runs in this process
 * (test/support/cli.ts); the last block runs the built bin, for what only its process shows.
 */
import { createPublicKey, type JsonWebKey } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevPdp } from '../../../packages/dev-pdp/src/index.js';
import { createPep, type Pep } from '../../../src/index.js';
import { expectUsage, runBin } from '../../support/bin.js';
import { runInProcess } from '../../support/cli.js';
import { closedPort } from '../../support/fake-pdp.js';
import { type RedisHandle, redisUnavailableReason, sharedRedis } from '../../support/redis.js';

let pdp: Awaited<ReturnType<typeof startDevPdp>>;
let other: Awaited<ReturnType<typeof startDevPdp>>;
let pep: Pep;
let dir: string;
let jwksFile: string;
const ARGS = { orderId: 'ord_1842', amount: 12 };

beforeAll(async () => {
  pdp = await startDevPdp({ policy: { agents: ['support-ai'], latches: [] }, port: 0, log: false });
  other = await startDevPdp({ policy: { agents: ['support-ai'], latches: [] }, port: 0, log: false });
  pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's', permits: false });
  dir = await mkdtemp(join(tmpdir(), 'agent-pep-verify-'));
  jwksFile = join(dir, 'jwks.json');
  await writeFile(jwksFile, await (await fetch(pdp.jwksUrl)).text());
});
afterAll(async () => {
  await pep.close();
  await pdp.close();
  await other.close();
  await rm(dir, { recursive: true, force: true });
});

async function permit(tool = 'refund_payment', args: Record<string, unknown> = ARGS): Promise<string> {
  const d = await pep.authorizeAction(tool, args);
  expect(d.verdict).toBe('ALLOW');
  return d.permitId as string;
}

function flags(keys: string = jwksFile, tool = 'refund_payment', args: unknown = ARGS): string[] {
  return [
    'verify-permit',
    '--keys',
    keys,
    '--issuer',
    pdp.issuer,
    '--audience',
    'agent-pep',
    '--tool',
    tool,
    '--args',
    JSON.stringify(args),
  ];
}

describe('agent-pep verify-permit: a permit that verifies', () => {
  it('prints the claims and exits 0, with keys from a JWKS URL or a JWKS file', async () => {
    const p = await permit();
    for (const keys of [pdp.jwksUrl, jwksFile]) {
      const r = await runInProcess([...flags(keys), p]);
      expect(r.code).toBe(0);
      const claims = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(claims).toMatchObject({
        iss: pdp.issuer,
        aud: 'agent-pep',
        sub: 'support-ai',
        sid: 's',
        tool: 'refund_payment',
      });
      expect(typeof claims.jti).toBe('string');
    }
  });

  it('takes keys from a file with one JWK or a PEM public key too', async () => {
    const p = await permit();
    const jwks = (await (await fetch(pdp.jwksUrl)).json()) as { keys: JsonWebKey[] };
    const jwkFile = join(dir, 'key.jwk.json');
    const pemFile = join(dir, 'key.pem');
    await writeFile(jwkFile, JSON.stringify(jwks.keys[0]));
    await writeFile(
      pemFile,
      createPublicKey({ key: jwks.keys[0] as JsonWebKey, format: 'jwk' }).export({ type: 'spki', format: 'pem' }),
    );
    for (const keys of [jwkFile, pemFile]) expect((await runInProcess([...flags(keys), p])).code).toBe(0);
    const notKey = join(dir, 'not-a-key.pem');
    await writeFile(notKey, '-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----\n');
    expectUsage(await runInProcess([...flags(notKey), p]), 'verify-permit', /is not a PEM public key/);
  });

  it('reads the permit from stdin when it is - or absent', async () => {
    const p = await permit();
    expect((await runInProcess([...flags(), '-'], { input: `${p}\n` })).code).toBe(0);
    expect((await runInProcess(flags(), { input: p })).code).toBe(0);
  });

  it('claims nothing without --consume: the same permit verifies again', async () => {
    const p = await permit();
    expect((await runInProcess([...flags(), p])).code).toBe(0);
    expect((await runInProcess([...flags(), p])).code).toBe(0);
  });

  it('accepts a tool name in any spelling, as the service would', async () => {
    const p = await permit();
    expect((await runInProcess([...flags(jwksFile, 'RefundPayment'), p])).code).toBe(0);
  });
});

describe('agent-pep verify-permit: a permit that is refused prints its code and exits 1', () => {
  it('names a tampered signature, a tampered payload, garbage and an empty permit', async () => {
    const p = await permit();
    const [h, b, s] = p.split('.') as [string, string, string];
    const flipped = `${h}.${b}.${s.slice(0, -4)}${s.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    const payload = JSON.parse(Buffer.from(b, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: 'evil' })).toString('base64url')}.${s}`;
    const cases: [string, string][] = [
      [flipped, 'permit_signature_invalid'],
      [forged, 'permit_signature_invalid'],
      ['not-a-permit', 'permit_malformed'],
    ];
    for (const [value, code] of cases) {
      const r = await runInProcess([...flags(), value]);
      expect([r.code, r.stdout.trim()]).toEqual([1, code]);
      expect(r.stderr).not.toContain(value);
    }
    const empty = await runInProcess(flags(), { input: '' });
    expect([empty.code, empty.stdout.trim()]).toEqual([1, 'permit_missing']);
  });

  it('names other args, another tool, another audience and keys of another PDP', async () => {
    const p = await permit();
    const args = await runInProcess([...flags(jwksFile, 'refund_payment', { ...ARGS, amount: 9999 }), p]);
    expect([args.code, args.stdout.trim()]).toEqual([1, 'permit_args_mismatch']);
    const tool = await runInProcess([...flags(jwksFile, 'delete_user'), p]);
    expect([tool.code, tool.stdout.trim()]).toEqual([1, 'permit_tool_mismatch']);
    const aud = await runInProcess([...flags().map((x) => (x === 'agent-pep' ? 'payments-service' : x)), p]);
    expect([aud.code, aud.stdout.trim()]).toEqual([1, 'permit_claim_invalid']);
    const keys = await runInProcess([...flags(other.jwksUrl), p]);
    expect([keys.code, keys.stdout.trim()]).toEqual([1, 'permit_signature_invalid']);
  });

  it('is permit_keys_unavailable when the JWKS URL is down', async () => {
    const p = await permit();
    const r = await runInProcess([...flags(`${await closedPort()}/.well-known/jwks.json`), p]);
    expect([r.code, r.stdout.trim()]).toEqual([1, 'permit_keys_unavailable']);
  });
});

const redisSkip = redisUnavailableReason(false);

describe.skipIf(redisSkip !== undefined)('agent-pep verify-permit --consume --redis', () => {
  let redis: RedisHandle;
  beforeAll(async () => {
    redis = await sharedRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it('claims the jti in the shared store: the first run exits 0, the next permit_replayed', async () => {
    const p = await permit();
    const consume = [...flags(), '--consume', '--redis', redis.url, '--redis-prefix', `cli-test-${Date.now()}:`, p];
    expect((await runInProcess(consume)).code).toBe(0);
    const again = await runInProcess(consume);
    expect([again.code, again.stdout.trim()]).toEqual([1, 'permit_replayed']);
  });
});

describe('agent-pep verify-permit: usage errors exit 2', () => {
  it('names a keys file that cannot be read (ENOENT) or is not JSON (position), and missing flags', async () => {
    expectUsage(
      await runInProcess([...flags(join(dir, 'missing.json')), 'x']),
      'verify-permit',
      /missing\.json \(ENOENT\)/,
    );
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{"keys" []}');
    expectUsage(
      await runInProcess([...flags(bad), 'x']),
      'verify-permit',
      /not valid JSON at line 1, column 9 \(position 8\)/,
    );
    expectUsage(
      await runInProcess(['verify-permit', '--keys', jwksFile, 'x']),
      'verify-permit',
      /--issuer I is required/,
    );
    expectUsage(
      await runInProcess([...flags(jwksFile, 'refund_payment', 'nope').slice(0, -1), '{x', 'x']),
      'verify-permit',
      /--args is not valid JSON/,
    );
  });

  it('verify-permit refuses args with a duplicate member name or a value that is not I-JSON, as the hook does', async () => {
    const p = await permit();
    const base = flags().slice(0, -1);
    // the last name wins in JSON.parse, so this would verify against { amount: 12 } while the service may read 9999
    const twice = await runInProcess([...base, '{"orderId":"ord_1842","amount":9999,"amount":12}', p]);
    expectUsage(twice, 'verify-permit', /--args names a member twice/);
    expect(twice.stderr).not.toContain('9999');
    const escaped = await runInProcess([...base, '{"orderId":"ord_1842","amount":9999,"\\u0061mount":12}', p]);
    expectUsage(escaped, 'verify-permit', /--args names a member twice/);
    const huge = await runInProcess([...base, '{"orderId":"ord_1842","amount":1e400}', p]);
    expectUsage(huge, 'verify-permit', /--args is not I-JSON/);
  });

  it('refuses --consume without --redis: a one-shot process has no store a service would see', async () => {
    expectUsage(await runInProcess([...flags(), '--consume', 'x']), 'verify-permit', /--consume needs --redis URL/);
    expectUsage(
      await runInProcess([...flags(), '--redis', 'redis://127.0.0.1:1', 'x']),
      'verify-permit',
      /only used with --consume/,
    );
  });

  it('prints its help with --help and exits 0', async () => {
    const r = await runInProcess(['verify-permit', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: agent-pep verify-permit/);
    expect(r.stdout).toContain('--consume');
  });
});

describe('agent-pep verify-permit: the bin', () => {
  it('exits 0 for a permit read from a piped stdin, 1 with the code for a refused one', async () => {
    const p = await permit();
    const [ok, refused] = await Promise.all([
      runBin(flags(), { input: `${p}\n` }),
      runBin([...flags(jwksFile, 'delete_user'), p]),
    ]);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ iss: pdp.issuer, tool: 'refund_payment' });
    expect([refused.code, refused.stdout.trim()]).toEqual([1, 'permit_tool_mismatch']);
  });
});
