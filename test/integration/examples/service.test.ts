/**
 * examples/service.ts, the README's "verifying permits in a service", compiled and run as a process
 * against the dev PDP bin: a permit the PDP minted for exactly this call runs once; anything else is
 * refused with its PermitVerificationError code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPep, type Pep } from '../../../src/index.js';
import { built, type RunningProcess, startDevPdpProcess, startPrintingUrl } from '../../support/processes.js';

let pdp: RunningProcess;
let service: RunningProcess;
let pep: Pep;

beforeAll(async () => {
  pdp = await startDevPdpProcess('examples/quickstart/policy.json', ['--audience', 'payments-service']);
  service = await startPrintingUrl([built('examples/service.js')], { PDP_URL: pdp.url, PORT: '0' });
  pep = createPep({
    pdpUrl: pdp.url,
    agentId: 'support-ai',
    session: 'sess_service',
    permits: { keys: `${pdp.url}/.well-known/jwks.json`, issuer: pdp.url },
  });
});
afterAll(async () => {
  await pep?.close();
  await service?.stop();
  await pdp?.stop();
});

async function post(args: unknown, permit?: string): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (permit !== undefined) headers.authorization = `Permit ${permit}`;
  const res = await fetch(service.url, { method: 'POST', headers, body: JSON.stringify(args) });
  return { status: res.status, body: await res.json() };
}

describe('examples/service.ts', () => {
  it('performs the refund with a permit for exactly these args, once', async () => {
    const args = { orderId: 'ord_1842', amount: 129 };
    const { verdict, permitId } = await pep.authorizeAction('refund_payment', args);
    expect(verdict).toBe('ALLOW');
    expect(await post(args, permitId)).toEqual({ status: 200, body: { refunded: 129 } });
    expect(await post(args, permitId)).toEqual({ status: 403, body: { error: 'permit_replayed' } });
  });

  it('refuses a call without a permit, and a permit for other args', async () => {
    expect(await post({ orderId: 'ord_1', amount: 5 })).toEqual({ status: 403, body: { error: 'permit_missing' } });
    const { permitId } = await pep.authorizeAction('refund_payment', { orderId: 'ord_2', amount: 10 });
    expect(await post({ orderId: 'ord_2', amount: 499 }, permitId)).toEqual({
      status: 403,
      body: { error: 'permit_args_mismatch' },
    });
  });

  it('stops on SIGTERM with exit code 0', async () => {
    expect(await service.stop()).toBe(0);
  });
});
