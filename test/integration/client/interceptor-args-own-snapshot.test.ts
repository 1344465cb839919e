/**
 * The args interceptors see (CONTRACT.md section 7): a deeply frozen snapshot, never the caller's
 * object, and never the object a guarded tool runs with. `authorizeAction` and `authorizeActions`
 * freeze the client's own snapshot in place (no copy); `guardTool` hands its snapshot to the tool,
 * so the interceptors see a frozen copy of it and the tool's args stay writable.
 */
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Interceptor, Pep } from '../../../src/index.js';
import { answer } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';
import { createTestIssuer, type TestIssuer } from '../../support/permits.js';

const suite = useFakePdp();
let issuer: TestIssuer;

beforeAll(async () => {
  issuer = await createTestIssuer();
});
// An ALLOW with a permit bound to the args the PDP received (the suite resets the handler after each test).
beforeEach(() => {
  suite.pdp.handler = async (req, res) => {
    const body: Record<string, unknown> = { verdict: 'ALLOW', requestId: req.body.requestId };
    if (req.body.stage === 'action') {
      body.permitId = await issuer.mint(String(req.body.tool), req.body.args as Record<string, unknown>, {
        sid: String(req.body.session),
      });
    }
    answer(res, body);
  };
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
  return suite.clients.client({ permits: { keys: issuer.jwks, issuer: issuer.issuer }, interceptors });
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
    expect(suite.pdp.received[0]?.body.args).toEqual({ orderId: 'o1', nested: { list: [1] } });
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
