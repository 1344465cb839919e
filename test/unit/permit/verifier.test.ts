/**
 * The verifier's one code path (src/permit/verifier.ts): a valid permit resolves its claims once; the
 * jti is claimed last, scoped by issuer, held until exp + 360 s; a replay store that cannot answer
 * (throws, rejects, hangs, non-boolean, full) refuses; the checker runs every check but the claim.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { PermitVerificationError } from '../../../src/errors.js';
import { snapshotJsonObject } from '../../../src/internal/json.js';
import { type BoundPermit, checkPermitBinding } from '../../../src/permit/binding.js';
import { decodePermit } from '../../../src/permit/decode.js';
import { actionHash } from '../../../src/permit/hash.js';
import { createPermitChecker, type PermitVerifierOptions } from '../../../src/permit/verifier.js';
import { createMemoryReplayStore } from '../../../src/replay/memory.js';
import { type ReplayStore, ReplayUnknownError } from '../../../src/replay/types.js';
import {
  ARGS,
  AUDIENCE,
  createPermitKit,
  ISSUER,
  type MintOptions,
  nowSec,
  type PermitKit,
  permitCodeOf,
  TOOL,
} from '../../support/permits.js';

let kit: PermitKit;
beforeAll(async () => {
  kit = await createPermitKit();
});
const mint = (o?: MintOptions): Promise<string> => kit.mint(o);
const verifier = (extra: Partial<PermitVerifierOptions> = {}) => kit.verifier(extra);

describe('createPermitVerifier and createPermitChecker: one code path, the jti claimed once and last (src/permit/verifier.ts)', () => {
  it('resolves the claims, once', async () => {
    const v = verifier();
    const permit = await mint();
    const claims = await v.verify(permit, { tool: TOOL, args: ARGS });
    expect(claims.tool).toBe(TOOL);
    expect(claims.sub).toBe('support-ai');
    expect(claims.act_hash).toBe(actionHash(TOOL, ARGS));
  });

  it('replay: the second verify is permit_replayed, even through another spelling', async () => {
    const v = verifier();
    const permit = await mint();
    await v.verify(permit, { tool: TOOL, args: ARGS });
    expect(await permitCodeOf(v.verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_replayed');
    expect(
      await permitCodeOf(v.verify(permit, { tool: 'refundPayment', args: { amount: 129, orderId: 'ord_1842' } })),
    ).toBe('permit_replayed');
  });

  it('parallel uses of one permit on one verifier: exactly one succeeds', async () => {
    const v = verifier();
    const permit = await mint();
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => v.verify(permit, { tool: TOOL, args: ARGS })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results)
      if (r.status === 'rejected') expect((r.reason as PermitVerificationError).code).toBe('permit_replayed');
  });

  it('a failed check does not burn the jti', async () => {
    const claim = vi.fn(createMemoryReplayStore().claim);
    const v = verifier({ replayStore: { claim } });
    const permit = await mint();
    expect(await permitCodeOf(v.verify(permit, { tool: TOOL, args: { ...ARGS, amount: 130 } }))).toBe(
      'permit_args_mismatch',
    );
    expect(await permitCodeOf(v.verify(permit, { tool: 'delete_account', args: ARGS }))).toBe('permit_tool_mismatch');
    expect(claim).not.toHaveBeenCalled();
    await expect(v.verify(permit, { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    expect(claim).toHaveBeenCalledTimes(1);
  });

  it('claims a key scoped by issuer, held until exp + 360 s (past any verifier tolerance), whatever this verifier tolerates', async () => {
    const calls: [string, number][] = [];
    const store: ReplayStore = {
      claim: async (k, e) => {
        calls.push([k, e]);
        return true;
      },
    };
    const permit = await mint({ claims: { jti: 'jti-1', exp: nowSec() + 60 } });
    const claims = await verifier({ replayStore: store }).verify(permit, { tool: TOOL, args: ARGS });
    expect(calls).toHaveLength(1);
    const [key, expiresAtMs] = calls[0]!;
    expect(expiresAtMs).toBe((claims.exp + 360) * 1000);
    expect(key).not.toContain('jti-1'); // hashed: bounded length, no raw ids
    // the same jti from another issuer is another key
    const shared = createMemoryReplayStore();
    const other = 'http://other-pdp.test';
    const vA = verifier({ replayStore: shared });
    const vB = verifier({ replayStore: shared, issuer: other });
    await expect(vA.verify(await mint({ claims: { jti: 'same' } }), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    await expect(
      vB.verify(await mint({ claims: { jti: 'same', iss: other } }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
    expect(await permitCodeOf(vA.verify(await mint({ claims: { jti: 'same' } }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_replayed',
    );
  });

  it('a store that rejects, throws, hangs or answers a non-boolean: permit_store_unavailable', async () => {
    const stores: ReplayStore[] = [
      { claim: () => Promise.reject(new Error('down')) },
      {
        claim: () => {
          throw new Error('sync throw');
        },
      },
      { claim: () => Promise.resolve('OK' as unknown as boolean) },
      { claim: () => Promise.resolve(undefined as unknown as boolean) },
    ];
    for (const replayStore of stores) {
      expect(await permitCodeOf(verifier({ replayStore }).verify(await mint(), { tool: TOOL, args: ARGS }))).toBe(
        'permit_store_unavailable',
      );
    }
    const hung = verifier({ replayStore: { claim: () => new Promise<boolean>(() => {}) }, storeTimeoutMs: 200 });
    const started = Date.now();
    expect(await permitCodeOf(hung.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_store_unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('the claim carries the permit iat (ms); a store that lost claims since then is permit_replay_unknown, sync or async', async () => {
    const iat = nowSec() - 30;
    const seen: unknown[] = [];
    const recording: ReplayStore = {
      claim: (_key, _exp, issuedAtMs) => {
        seen.push(issuedAtMs);
        return true;
      },
    };
    const permit = await mint({ claims: { iat, exp: iat + 60 } });
    await expect(
      verifier({ replayStore: recording }).verify(permit, { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
    expect(seen).toEqual([iat * 1000]);
    const stores: ReplayStore[] = [
      { claim: () => Promise.reject(new ReplayUnknownError('lost')) },
      {
        claim: () => {
          throw new ReplayUnknownError('lost');
        },
      },
      // a store built against another copy of the package: the code is what counts
      { claim: () => Promise.reject(Object.assign(new Error('lost'), { code: 'permit_replay_unknown' })) },
    ];
    for (const replayStore of stores) {
      expect(await permitCodeOf(verifier({ replayStore }).verify(await mint(), { tool: TOOL, args: ARGS }))).toBe(
        'permit_replay_unknown',
      );
    }
  });

  it('a store may answer synchronously: true accepts, false is permit_replayed, a non-boolean or a throw refuses', async () => {
    let answer: unknown = true;
    const store: ReplayStore = { claim: () => answer as boolean };
    const v = verifier({ replayStore: store });
    await expect(v.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    answer = false;
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_replayed');
    answer = 'yes';
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_store_unavailable');
  });

  it('a synchronous answer is not awaited under a deadline: the memory store costs no timer', async () => {
    const v = verifier({ replayStore: createMemoryReplayStore() });
    const permit = await mint();
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      await expect(v.verify(permit, { tool: TOOL, args: ARGS })).resolves.toBeDefined();
      expect(timers).not.toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }
    // a store answering with a promise is bounded by storeTimeoutMs (one timer)
    const promised = verifier({ replayStore: { claim: async () => true } });
    const permit2 = await mint();
    const timers2 = vi.spyOn(globalThis, 'setTimeout');
    try {
      await expect(promised.verify(permit2, { tool: TOOL, args: ARGS })).resolves.toBeDefined();
      expect(timers2).toHaveBeenCalledTimes(1);
    } finally {
      timers2.mockRestore();
    }
  });

  it('a full memory store refuses: permit_store_unavailable', async () => {
    const v = verifier({ replayStore: createMemoryReplayStore({ maxEntries: 2 }) });
    await v.verify(await mint(), { tool: TOOL, args: ARGS });
    await v.verify(await mint(), { tool: TOOL, args: ARGS });
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_store_unavailable');
  });

  it('messages never contain the permit or the args', async () => {
    const permit = await mint();
    const secretArgs = { orderId: 'ord_SECRET_9', amount: 1 };
    try {
      await verifier().verify(permit, { tool: TOOL, args: secretArgs });
      expect.unreachable();
    } catch (e) {
      const msg = String((e as Error).message);
      expect(msg).not.toContain(permit.split('.')[1]);
      expect(msg).not.toContain('ord_SECRET_9');
      expect((e as PermitVerificationError).code).toBe('permit_args_mismatch');
    }
  });

  it('checks everything but the replay claim; aud only when given; sub and sid when given', async () => {
    const checker = createPermitChecker({ keys: kit.jwks, issuer: ISSUER });
    const permit = await mint({ claims: { aud: 'whatever-service' } });
    const expected = { tool: TOOL, args: ARGS, subject: 'support-ai', session: 'sess_demo' };
    await expect(checker.check(permit, expected)).resolves.toBeDefined();
    await expect(checker.check(permit, expected)).resolves.toBeDefined(); // not consumed
    expect(await permitCodeOf(checker.check(permit, { ...expected, audience: AUDIENCE }))).toBe('permit_claim_invalid');
    expect(await permitCodeOf(checker.check(permit, { ...expected, subject: 'other-agent' }))).toBe(
      'permit_claim_invalid',
    );
    expect(await permitCodeOf(checker.check(permit, { ...expected, session: 'sess_other' }))).toBe(
      'permit_claim_invalid',
    );
    expect(await permitCodeOf(checker.check(permit, { ...expected, tool: 'other' }))).toBe('permit_tool_mismatch');
    expect(await permitCodeOf(checker.check(permit, { ...expected, args: { ...ARGS, amount: 1 } }))).toBe(
      'permit_args_mismatch',
    );
  });
});

describe("createPermitChecker reuses rule 5's decoded payload and act_hash only for the same permit and the same args object", () => {
  const expectedFor = (args: Record<string, unknown>) => ({
    tool: TOOL,
    args,
    subject: 'support-ai',
    session: 'sess_demo',
  });
  const asked = (args: Record<string, unknown>) => ({ tool: TOOL, args, agentId: 'support-ai', session: 'sess_demo' });
  const boundOf = (permit: string, args: Record<string, unknown>): BoundPermit => {
    const b = checkPermitBinding(permit, asked(args));
    if (typeof b === 'string') throw new Error(b);
    return b;
  };

  it('rule 5 hands back the decoded payload and the act_hash of exactly these args', async () => {
    const permit = await mint();
    const args = snapshotJsonObject(ARGS);
    const b = boundOf(permit, args);
    expect(b.permit).toBe(permit);
    expect(b.args).toBe(args);
    expect(b.actHash).toBe(actionHash(TOOL, ARGS));
    expect(b.payload).toEqual(decodePermit(permit, new Set(['EdDSA'])).payload);
  });

  it('with the bound, the same claims as without', async () => {
    const checker = createPermitChecker({ keys: kit.jwks, issuer: ISSUER });
    const permit = await mint();
    const args = snapshotJsonObject(ARGS);
    const plain = await checker.check(permit, expectedFor(args));
    await expect(checker.check(permit, { ...expectedFor(args), bound: boundOf(permit, args) })).resolves.toEqual(plain);
  });

  it('the signature is still checked: a permit signed by a foreign key is permit_signature_invalid', async () => {
    const checker = createPermitChecker({ keys: kit.jwks, issuer: ISSUER });
    const foreign = await createPermitKit();
    const forged = await mint({ key: foreign.privateKey });
    const args = snapshotJsonObject(ARGS);
    const b = boundOf(forged, args); // rule 5 decodes without trust: it passes
    expect(await permitCodeOf(checker.check(forged, { ...expectedFor(args), bound: b }))).toBe(
      'permit_signature_invalid',
    );
  });

  it('every claim is still checked: an expired permit is permit_expired', async () => {
    const checker = createPermitChecker({ keys: kit.jwks, issuer: ISSUER });
    const t = nowSec();
    const expired = await mint({ claims: { iat: t - 200, exp: t - 100 } });
    const args = snapshotJsonObject(ARGS);
    expect(await permitCodeOf(checker.check(expired, { ...expectedFor(args), bound: boundOf(expired, args) }))).toBe(
      'permit_expired',
    );
  });

  it('other args than the ones hashed (another object, even with the same content) are hashed again', async () => {
    const checker = createPermitChecker({ keys: kit.jwks, issuer: ISSUER });
    const permit = await mint();
    const b = boundOf(permit, snapshotJsonObject(ARGS));
    const other = { ...ARGS, amount: 1 };
    expect(await permitCodeOf(checker.check(permit, { ...expectedFor(other), bound: b }))).toBe('permit_args_mismatch');
    await expect(checker.check(permit, { ...expectedFor({ ...ARGS }), bound: b })).resolves.toBeDefined();
  });

  it("another permit's bound is ignored: that permit is decoded and hashed on its own", async () => {
    const checker = createPermitChecker({ keys: kit.jwks, issuer: ISSUER });
    const args = snapshotJsonObject(ARGS);
    const good = await mint();
    const otherArgs = await mint({ claims: { act_hash: actionHash(TOOL, { ...ARGS, amount: 1 }) } });
    const b = boundOf(good, args);
    expect(await permitCodeOf(checker.check(otherArgs, { ...expectedFor(args), bound: b }))).toBe(
      'permit_args_mismatch',
    );
  });
});
