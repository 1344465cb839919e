/**
 * The args interceptors see (CONTRACT.md section 7): a deeply frozen snapshot, never the caller's
 * object, and never the object a guarded tool runs with. `authorizeAction` and `authorizeActions`
 * freeze the client's own snapshot in place (no copy); `guardTool` hands its snapshot to the tool,
 * so the interceptors see a frozen copy of it and the tool's args stay writable.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPep, type Interceptor, type Pep } from '../../../src/index.js';
import { allowEcho, answer, type FakePdp, startFakePdp } from '../../support/fake-pdp.js';
import { createTestIssuer, type TestIssuer } from '../../support/permits.js';

let pdp: FakePdp;
let issuer: TestIssuer;
const clients: Pep[] = [];

beforeAll(async () => {
  pdp = await startFakePdp();
  issuer = await createTestIssuer();
  pdp.handler = async (req, res) => {
    const body: Record<string, unknown> = { verdict: 'ALLOW', requestId: req.body.requestId };
    if (req.body.stage === 'action') {
      body.permitId = await issuer.mint(String(req.body.tool), req.body.args as Record<string, unknown>, {
        sid: String(req.body.session),
      });
    }
    answer(res, body);
  };
});
afterAll(async () => {
  pdp.handler = allowEcho;
  await pdp.close();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  pdp.received.length = 0;
});

/** A pass-through interceptor that records the args it saw and whether they were deeply frozen. */
function watcher(seen: { args: unknown; frozen: boolean }[]): Interceptor {
  return {
    name: 'watch',
    before: (s) => {
      const args = s.args as { nested?: { list?: unknown[] } } | undefined;
      seen.push({
        args,
        frozen: Object.isFrozen(args) && Object.isFrozen(args?.nested) && Object.isFrozen(args?.nested?.list),
      });
      return { action: 'proceed' };
    },
  };
}

function client(interceptors: Interceptor[]): Pep {
  const pep = createPep({
    pdpUrl: pdp.url,
    agentId: 'support-ai',
    session: 'sess_demo',
    permits: { keys: issuer.jwks, issuer: issuer.issuer },
    interceptors,
  });
  clients.push(pep);
  return pep;
}

describe('the args an interceptor sees', () => {
  it('authorizeAction: a deeply frozen snapshot, never the caller object, which stays writable', async () => {
    const seen: { args: unknown; frozen: boolean }[] = [];
    const pep = client([watcher(seen)]);
    const args = { orderId: 'o1', nested: { list: [1] } };
    const d = await pep.authorizeAction('lookup_order', args);
    expect(d.verdict).toBe('ALLOW');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.frozen).toBe(true);
    expect(seen[0]?.args).not.toBe(args);
    expect(seen[0]?.args).toEqual(args);
    expect(Object.isFrozen(args) || Object.isFrozen(args.nested)).toBe(false);
    expect(pdp.received[0]?.body.args).toEqual({ orderId: 'o1', nested: { list: [1] } });
  });

  it('authorizeActions: each call its own frozen snapshot', async () => {
    const seen: { args: unknown; frozen: boolean }[] = [];
    const pep = client([watcher(seen)]);
    const a = { orderId: 'o1', nested: { list: [1] } };
    const b = { orderId: 'o2', nested: { list: [2] } };
    const ds = await pep.authorizeActions([
      { tool: 'lookup_order', args: a },
      { tool: 'refund_order', args: b },
    ]);
    expect(ds.map((d) => d.verdict)).toEqual(['ALLOW', 'ALLOW']);
    expect(seen.map((s) => s.frozen)).toEqual([true, true]);
    expect(seen.map((s) => s.args)).toEqual([a, b]);
    expect(Object.isFrozen(a) || Object.isFrozen(b)).toBe(false);
  });

  it('guardTool: the interceptors see a frozen copy; the tool runs with writable args', async () => {
    const seen: { args: unknown; frozen: boolean }[] = [];
    const pep = client([watcher(seen)]);
    const execute = vi.fn((args: Record<string, unknown>) => {
      const nested = args.nested as { list: unknown[] };
      nested.list.push('added by the tool');
      args.extra = true;
      return { args };
    });
    const out = await pep.guardTool('lookup_order', execute)({ orderId: 'o1', nested: { list: [1] } });
    expect(execute).toHaveBeenCalledTimes(1);
    expect(seen[0]?.frozen).toBe(true);
    expect(seen[0]?.args).not.toBe(out.args);
    expect(seen[0]?.args).toEqual({ orderId: 'o1', nested: { list: [1] } });
    expect(out.args).toEqual({ orderId: 'o1', nested: { list: [1, 'added by the tool'] }, extra: true });
  });
});
