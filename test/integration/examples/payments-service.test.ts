/**
 * examples/payments-service: the server refuses every call without a valid permit (no effect), and
 * the agent beside it runs to the end with every outcome as expected. The server is imported with
 * 'agent-pep' mapped to the sources; the agent runs compiled, as `npm run example:payments` runs it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type PaymentsService, startPaymentsService } from '../../../examples/payments-service/server.js';
import { createTestIssuer, type TestIssuer } from '../../support/permits.js';
import { built, runNode } from '../../support/processes.js';

vi.mock('agent-pep', () => import('../../../src/index.js'));

const ARGS = { orderId: 'ord_1842', amount: 129 };

let pdp: TestIssuer;
let service: PaymentsService;

beforeAll(async () => {
  pdp = await createTestIssuer();
  service = await startPaymentsService({ port: 0, keys: pdp.jwks, issuer: pdp.issuer, audience: 'payments-service' });
});
afterAll(() => service?.close());

async function post(
  path: string,
  body: unknown,
  permit?: string,
  contentType = 'application/json',
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { 'content-type': contentType };
  if (permit !== undefined) headers.authorization = `Permit ${permit}`;
  const res = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('payments-service example', () => {
  it("runs against the sources ('agent-pep' is mapped to src)", async () => {
    const byName = await import('agent-pep');
    const src = await import('../../../src/index.js');
    expect(byName.createPermitVerifier).toBe(src.createPermitVerifier);
  });

  it('performs a refund with a valid permit, exactly once', async () => {
    const before = service.ledger.length;
    const permit = await pdp.mint('refund_payment', ARGS);
    const first = await post('/refund', ARGS, permit);
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('refunded');
    expect(service.ledger.length).toBe(before + 1);
    const again = await post('/refund', ARGS, permit);
    expect(again).toEqual({ status: 403, body: { error: 'permit_replayed' } });
    expect(service.ledger.length).toBe(before + 1);
  });

  it('refuses without a permit: 401 permit_missing', async () => {
    const before = service.ledger.length;
    expect(await post('/refund', ARGS)).toEqual({ status: 401, body: { error: 'permit_missing' } });
    expect(await post('/tools/refund_payment', ARGS)).toEqual({ status: 401, body: { error: 'permit_missing' } });
    expect(service.ledger.length).toBe(before);
  });

  it('refuses a permit signed by another key: 401 permit_signature_invalid', async () => {
    const other = await createTestIssuer(pdp.issuer);
    const forged = await other.mint('refund_payment', ARGS, {});
    const [, p, s] = forged.split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', kid: pdp.kid, typ: 'permit+jwt' })).toString('base64url');
    expect((await post('/refund', ARGS, `${header}.${p}.${s}`)).body.error).toBe('permit_signature_invalid');
  });

  it('refuses an expired permit: 401 permit_expired', async () => {
    const t = Math.floor(Date.now() / 1000);
    const permit = await pdp.mint('refund_payment', ARGS, { iat: t - 120, exp: t - 60 });
    expect(await post('/refund', ARGS, permit)).toEqual({ status: 401, body: { error: 'permit_expired' } });
  });

  it('refuses changed args (403) without burning the permit', async () => {
    const permit = await pdp.mint('refund_payment', ARGS);
    expect(await post('/refund', { ...ARGS, amount: 499 }, permit)).toEqual({
      status: 403,
      body: { error: 'permit_args_mismatch' },
    });
    expect((await post('/refund', { amount: 129, orderId: 'ord_1842' }, permit)).status).toBe(200);
  });

  it('refuses a permit for another tool: 403 permit_tool_mismatch', async () => {
    const permit = await pdp.mint('refund_payment', { orderId: 'ord_1' });
    expect(await post('/tools/cancel_order', { orderId: 'ord_1' }, permit)).toEqual({
      status: 403,
      body: { error: 'permit_tool_mismatch' },
    });
    const cancel = await pdp.mint('cancelOrder', { orderId: 'ord_1' });
    expect((await post('/tools/cancel-order', { orderId: 'ord_1' }, cancel)).status).toBe(200);
  });

  it('answers requests that are not tool calls without consuming the permit', async () => {
    const permit = await pdp.mint('refund_payment', ARGS);
    expect((await post('/tools/launch_rockets', ARGS, permit)).status).toBe(404);
    expect((await post('/refund', '{not json', permit)).status).toBe(400);
    expect((await post('/refund', '[1]', permit)).status).toBe(400);
    expect((await post('/refund', ARGS, permit, 'text/plain')).status).toBe(415);
    expect((await post('/refund', { ...ARGS, pad: 'x'.repeat(20_000) }, permit)).status).toBe(413);
    expect((await fetch(`${service.url}/refund`)).status).toBe(405);
    expect((await post('/refund', ARGS, permit)).status).toBe(200);
  });

  it('refuses with 503 when its keys or its replay store are unavailable', async () => {
    const down = createServer();
    await new Promise<void>((r) => down.listen(0, '127.0.0.1', () => r()));
    const port = (down.address() as AddressInfo).port;
    await new Promise<void>((r) => down.close(() => r()));
    const noKeys = await startPaymentsService({ keys: `http://127.0.0.1:${port}/jwks.json`, issuer: pdp.issuer });
    const noStore = await startPaymentsService({
      keys: pdp.jwks,
      issuer: pdp.issuer,
      replayStore: { claim: () => Promise.reject(new Error('down')) },
    });
    try {
      for (const [svc, code] of [
        [noKeys, 'permit_keys_unavailable'],
        [noStore, 'permit_store_unavailable'],
      ] as const) {
        const res = await fetch(`${svc.url}/refund`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Permit ${await pdp.mint('refund_payment', ARGS)}`,
          },
          body: JSON.stringify(ARGS),
        });
        expect(res.status).toBe(503);
        expect(await res.json()).toEqual({ error: code });
        expect(svc.ledger).toHaveLength(0);
      }
    } finally {
      await noKeys.close();
      await noStore.close();
    }
  });
});

describe('payments-service example agent', () => {
  it('runs every call through guardTool and the service, and exits 0 with every outcome as expected', async () => {
    const { code, stdout } = await runNode(built('examples/payments-service/agent.js'));
    expect(stdout).not.toMatch(/^FAIL/m);
    expect(stdout.match(/^ok {3}/gm)).toHaveLength(8);
    expect(code).toBe(0);
  });
});
