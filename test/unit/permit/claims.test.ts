/**
 * Checks 7 to 12 (src/permit/claims.ts): explicit typing, required claims and their types, iss, aud,
 * exp, nbf, iat and the 300 s lifetime, each with its code; the clock tolerance both ways.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { PermitVerifierOptions } from '../../../src/permit/verifier.js';
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

describe('Claims: typ, required claims and types, iss, aud, time and lifetime (src/permit/claims.ts)', () => {
  it('accepts an aud array containing the audience, and an audience list', async () => {
    await expect(
      verifier().verify(await mint({ claims: { aud: ['other', AUDIENCE] } }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
    const v = verifier({ audience: ['x', AUDIENCE] });
    await expect(v.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
  });

  it('accepts a lifetime of exactly 300 s, an nbf in the past, and no nbf / decision_id', async () => {
    const t = nowSec();
    const v = verifier();
    await expect(
      v.verify(await mint({ claims: { iat: t, exp: t + 300 } }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
    await expect(v.verify(await mint({ claims: { nbf: t - 10 } }), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    await expect(v.verify(await mint({ omit: ['decision_id'] }), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
  });

  it('tolerates a clock skew within clockToleranceSec', async () => {
    const t = nowSec();
    const v = verifier({ clockToleranceSec: 30 });
    await expect(
      v.verify(await mint({ claims: { iat: t - 60, exp: t - 10 } }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
    await expect(
      v.verify(await mint({ claims: { iat: t + 10, exp: t + 60, nbf: t + 10 } }), { tool: TOOL, args: ARGS }),
    ).resolves.toBeDefined();
  });

  it('expired: permit_expired', async () => {
    const t = nowSec();
    expect(
      await permitCodeOf(
        verifier().verify(await mint({ claims: { iat: t - 120, exp: t - 60 } }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_expired');
    // expired with exp before iat is still "expired" (time is checked before the lifetime)
    expect(
      await permitCodeOf(verifier().verify(await mint({ claims: { exp: t - 60 } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_expired');
  });

  it('nbf in the future: permit_not_yet_valid', async () => {
    expect(
      await permitCodeOf(
        verifier().verify(await mint({ claims: { nbf: nowSec() + 120 } }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_not_yet_valid');
  });

  it('iat in the future: permit_claim_invalid', async () => {
    const t = nowSec();
    expect(
      await permitCodeOf(
        verifier().verify(await mint({ claims: { iat: t + 120, exp: t + 180 } }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_claim_invalid');
  });

  it('lifetime over 300 s, or not positive: permit_claim_invalid', async () => {
    const t = nowSec();
    const v = verifier();
    expect(
      await permitCodeOf(v.verify(await mint({ claims: { iat: t, exp: t + 301 } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_claim_invalid');
    expect(
      await permitCodeOf(v.verify(await mint({ claims: { iat: t, exp: t + 3600 } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_claim_invalid');
    expect(await permitCodeOf(v.verify(await mint({ claims: { iat: t, exp: t } }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_claim_invalid',
    );
  });

  it('wrong iss: permit_claim_invalid', async () => {
    expect(
      await permitCodeOf(
        verifier().verify(await mint({ claims: { iss: 'http://evil.test' } }), { tool: TOOL, args: ARGS }),
      ),
    ).toBe('permit_claim_invalid');
    expect(
      await permitCodeOf(verifier().verify(await mint({ claims: { iss: `${ISSUER}/` } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_claim_invalid');
  });

  it('wrong aud: permit_claim_invalid', async () => {
    const v = verifier();
    for (const aud of ['email-service', ['a', 'b'], 'payments-service ', 'Payments-Service']) {
      expect(await permitCodeOf(v.verify(await mint({ claims: { aud } }), { tool: TOOL, args: ARGS }))).toBe(
        'permit_claim_invalid',
      );
    }
  });

  it('wrong or missing typ: permit_claim_invalid', async () => {
    const v = verifier();
    for (const typ of ['JWT', 'jwt', 'application/permit+jwt', 'PERMIT+JWT', 'at+jwt']) {
      expect(await permitCodeOf(v.verify(await mint({ header: { typ } }), { tool: TOOL, args: ARGS })), typ).toBe(
        'permit_claim_invalid',
      );
    }
    expect(await permitCodeOf(v.verify(await mint({ omitHeader: ['typ'] }), { tool: TOOL, args: ARGS }))).toBe(
      'permit_claim_invalid',
    );
  });

  it.each(['jti', 'exp', 'iat', 'iss', 'aud', 'sub', 'sid', 'tool', 'act_hash'])(
    'no %s: permit_claim_invalid',
    async (claim) => {
      expect(await permitCodeOf(verifier().verify(await mint({ omit: [claim] }), { tool: TOOL, args: ARGS }))).toBe(
        'permit_claim_invalid',
      );
    },
  );

  it.each([
    ['exp', String(nowSec() + 60)],
    ['iat', 'yesterday'],
    ['nbf', '0'],
    ['jti', 42],
    ['jti', ''],
    ['sub', null],
    ['aud', []],
    ['aud', [1]],
    ['tool', ['refund_payment']],
    ['act_hash', 1],
    ['decision_id', 7],
  ])('claim %s of the wrong type (%j): permit_claim_invalid', async (claim, value) => {
    expect(
      await permitCodeOf(verifier().verify(await mint({ claims: { [claim]: value } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_claim_invalid');
  });
});
