/**
 * `agent-pep evidence verify FILE --keys URL|FILE` (CONTRACT.md section 11) on the evidence log the dev
 * PDP writes with `evidencePath`: `{ ok, count }` and exit 0, or `{ ok: false, index, reason }` and exit 1
 * for a log that was edited, cut, reordered or signed by another key; usage errors exit 2. The command
 * runs in this process (test/support/cli.ts); the last block runs the built bin.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevPdp } from '../../../packages/dev-pdp/src/index.js';
import { createPep } from '../../../src/index.js';
import { expectUsage, runBin } from '../../support/bin.js';
import { runInProcess } from '../../support/cli.js';
import { PHONE_REDACTION } from '../../support/policies.js';

let dir: string;
let log: string;
let lines: string[];
let jwksFile: string;
let otherJwks: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-pep-evidence-'));
  log = join(dir, 'evidence.jsonl');
  const pdp = await startDevPdp({
    policy: { agents: ['support-ai'], latches: [PHONE_REDACTION] },
    port: 0,
    log: false,
    evidencePath: log,
  });
  const other = await startDevPdp({ policy: { agents: ['support-ai'], latches: [] }, port: 0, log: false });
  jwksFile = join(dir, 'jwks.json');
  otherJwks = join(dir, 'other-jwks.json');
  await writeFile(jwksFile, await (await fetch(pdp.jwksUrl)).text());
  await writeFile(otherJwks, await (await fetch(other.jwksUrl)).text());
  const pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's', permits: false });
  await pep.checkInput('hello');
  await pep.checkOutput('call 555-123-4567');
  await pep.authorizeAction('lookup_order', { orderId: 'o1' });
  await pep.checkDelivery('bye');
  await pep.close();
  await pdp.close();
  await other.close();
  lines = (await readFile(log, 'utf8')).trimEnd().split('\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function verify(content: string, keys = jwksFile): Promise<{ code: number; out: unknown }> {
  const file = join(dir, `case-${Math.random().toString(36).slice(2)}.jsonl`);
  await writeFile(file, content);
  const r = await runInProcess(['evidence', 'verify', file, '--keys', keys]);
  return { code: r.code, out: JSON.parse(r.stdout) };
}

describe('agent-pep evidence verify', () => {
  it('prints { ok: true, count } and exits 0 for the log as the dev PDP wrote it', async () => {
    expect(lines).toHaveLength(4);
    const r = await runInProcess(['evidence', 'verify', log, '--keys', jwksFile]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true, count: 4 });
  });

  it('names the first edited record: an edited verdict is hash_mismatch at its index', async () => {
    const edited = [...lines];
    const rec = JSON.parse(edited[1] as string) as Record<string, unknown>;
    edited[1] = JSON.stringify({ ...rec, verdict: 'ALLOW' });
    expect(await verify(`${edited.join('\n')}\n`)).toEqual({
      code: 1,
      out: { ok: false, index: 1, reason: 'hash_mismatch' },
    });
  });

  it('names a record that is missing or out of order', async () => {
    const cut = [lines[0], lines[2], lines[3]].join('\n');
    const missing = await verify(`${cut}\n`);
    expect(missing.code).toBe(1);
    expect(missing.out).toMatchObject({ ok: false, index: 1 });
    const swapped = [lines[0], lines[2], lines[1], lines[3]].join('\n');
    expect((await verify(swapped)).out).toMatchObject({ ok: false, index: 1 });
  });

  it('names a line that is not JSON as malformed, and keys of another PDP as signature_invalid', async () => {
    const broken = [lines[0], '{not json', lines[2]].join('\n');
    expect(await verify(broken)).toEqual({ code: 1, out: { ok: false, index: 1, reason: 'malformed' } });
    expect(await verify(lines.join('\n'), otherJwks)).toEqual({
      code: 1,
      out: { ok: false, index: 0, reason: 'signature_invalid' },
    });
  });

  it('a record that names a member twice is malformed: it reads one way to one parser and another way to the next', async () => {
    // A "verdict" put before the signed one: a first-wins reader sees FORGED, while JSON.parse (last
    // wins) still sees the signed verdict, so the hash and the signature alone would pass the line.
    const rec = JSON.parse(lines[2] as string) as Record<string, unknown>;
    const original = lines[2] as string;
    const forged = original.replace('{', `{"verdict":"FORGED",`);
    expect(JSON.parse(forged)).toEqual(rec);
    const edited = [lines[0], lines[1], forged, lines[3]].join('\n');
    expect(await verify(`${edited}\n`)).toEqual({ code: 1, out: { ok: false, index: 2, reason: 'malformed' } });
  });

  it('reads the log from stdin with -', async () => {
    const r = await runInProcess(['evidence', 'verify', '-', '--keys', jwksFile], { input: `${lines.join('\n')}\n` });
    expect([r.code, JSON.parse(r.stdout)]).toEqual([0, { ok: true, count: 4 }]);
  });
});

describe('agent-pep evidence: usage errors exit 2', () => {
  it('names a missing subcommand, an unknown one, a missing FILE (ENOENT) and missing --keys', async () => {
    expectUsage(await runInProcess(['evidence']), 'evidence verify', /a subcommand is required: verify/);
    expectUsage(await runInProcess(['evidence', 'check']), 'evidence verify', /unknown subcommand "check"/);
    expectUsage(
      await runInProcess(['evidence', 'verify', join(dir, 'nope.jsonl'), '--keys', jwksFile]),
      'evidence verify',
      /nope\.jsonl \(ENOENT\)/,
    );
    expectUsage(await runInProcess(['evidence', 'verify', log]), 'evidence verify', /--keys URL\|FILE is required/);
  });

  it('prints its help with --help and exits 0', async () => {
    for (const args of [
      ['evidence', '--help'],
      ['evidence', 'verify', '--help'],
    ]) {
      const r = await runInProcess(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: agent-pep evidence verify FILE --keys/);
    }
  });
});

describe('agent-pep evidence verify: the bin', () => {
  it('exits 0 for the log read from a piped stdin, 1 for an edited one', async () => {
    const cut = join(dir, 'bin-cut.jsonl');
    await writeFile(cut, `${[lines[0], lines[2], lines[3]].join('\n')}\n`);
    const [ok, edited] = await Promise.all([
      runBin(['evidence', 'verify', '-', '--keys', jwksFile], { input: `${lines.join('\n')}\n` }),
      runBin(['evidence', 'verify', cut, '--keys', jwksFile]),
    ]);
    expect([ok.code, JSON.parse(ok.stdout)]).toEqual([0, { ok: true, count: 4 }]);
    expect([edited.code, JSON.parse(edited.stdout)]).toMatchObject([1, { ok: false, index: 1 }]);
  });
});
