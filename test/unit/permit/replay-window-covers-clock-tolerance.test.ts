/**
 * Rule: a permit claimed once through a shared store is never accepted again by any verifier sharing
 * that store, whatever its (valid, 0-300 s) clock tolerance: the verifier holds the claimed key until
 * `exp` + 360 s (REPLAY_MARGIN_SEC), past the widest acceptance window, not `exp` + its own tolerance
 * (CONTRACT.md section 4: `jti` unique, one use; the store is shared between a service's verifiers).
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPermitVerifier } from '../../../src/permit/verifier.js';
import { createMemoryReplayStore } from '../../../src/replay/memory.js';
import { createTestIssuer, type TestIssuer } from '../../support/permits.js';

const AUDIENCE = 'payments-service';
const TOOL = 'refund_payment';
const ARGS = { orderId: 'ord_1842', amount: 129 };

let pdp: TestIssuer;
beforeAll(async () => {
  pdp = await createTestIssuer();
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('one shared memory store, two verifiers with different clock tolerances', () => {
  it('a permit used on the strict verifier is not accepted again on the lenient one after exp', async () => {
    const replayStore = createMemoryReplayStore();
    const strict = createPermitVerifier({
      keys: pdp.jwks,
      issuer: pdp.issuer,
      audience: AUDIENCE,
      replayStore,
      clockToleranceSec: 0,
    });
    const lenient = createPermitVerifier({
      keys: pdp.jwks,
      issuer: pdp.issuer,
      audience: AUDIENCE,
      replayStore,
      clockToleranceSec: 60,
    });
    const t = Math.floor(Date.now() / 1000);
    const permit = await pdp.mint(TOOL, ARGS, { iat: t - 10, exp: t + 2 });

    await expect(strict.verify(permit, { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    await expect(lenient.verify(permit, { tool: TOOL, args: ARGS })).rejects.toMatchObject({
      code: 'permit_replayed',
    });

    // 5 s later: past exp (and the strict verifier's hold), well inside the lenient verifier's window
    const realNow = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + 5000);
    const again = await lenient.verify(permit, { tool: TOOL, args: ARGS }).then(
      () => 'accepted',
      (e: { code?: string }) => e.code,
    );
    expect(again).not.toBe('accepted');
  });
});
