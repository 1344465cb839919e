/**
 * Where AuthZEN evaluations go (src/core/discovery.ts; docs/authzen.md, Discovery): the fixed paths
 * under `pdpUrl`, or the endpoints of the discovery document, fetched once and shared. A failed fetch
 * is tried again by the next decision; a document for another PDP stays discarded; the caller's abort
 * answers `aborted` at once. Against a scripted PDP on loopback.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { fixedEndpoints } from '../../../src/core/discovery.js';
import { createShared, type Shared } from '../../../src/core/shared.js';
import { resolveOptions } from '../../../src/options/pep.js';
import { answer, type FakePdp, type Handler, startFakePdp } from '../../support/fake-pdp.js';

let pdp: FakePdp;
const made: Shared[] = [];

beforeAll(async () => {
  pdp = await startFakePdp();
});
afterAll(() => pdp.close());
afterEach(async () => {
  pdp.received.length = 0;
  for (const s of made.splice(0)) await s.ctx.transport.close();
});

function source(path = '') {
  const s = createShared(
    resolveOptions({
      pdpUrl: `${pdp.url}${path}`,
      agentId: 'a',
      session: 's',
      protocol: 'authzen',
      discover: true,
      permits: false,
      retries: 0,
    }),
  );
  made.push(s);
  if (!s.endpoints) throw new Error('no endpoint source');
  return s.endpoints;
}

const deadline = () => performance.now() + 5_000;

/** Serves a discovery document for `pdpUrl` (the fake PDP's own, by default). */
function documentFor(pdpUrl?: string): Handler {
  return (_req, res) =>
    answer(res, {
      policy_decision_point: pdpUrl ?? pdp.url,
      access_evaluation_endpoint: `${pdp.url}/authz/one`,
      access_evaluations_endpoint: `${pdp.url}/authz/many`,
    });
}

describe('fixedEndpoints', () => {
  it('the AuthZEN paths under the path of pdpUrl, without a request', async () => {
    const r = await fixedEndpoints('/pdp')(deadline());
    expect(r).toEqual({
      ok: true,
      value: { evaluation: '/pdp/access/v1/evaluation', evaluations: '/pdp/access/v1/evaluations' },
      attempts: 0,
    });
  });
});

describe('discoveredEndpoints', () => {
  it('reads the endpoints from the document, fetched once for concurrent and later decisions', async () => {
    pdp.handler = documentFor();
    const endpoints = source();
    const [a, b] = await Promise.all([endpoints(deadline()), endpoints(deadline())]);
    const c = await endpoints(deadline());
    for (const r of [a, b, c])
      expect(r.ok && r.value).toEqual({ evaluation: '/authz/one', evaluations: '/authz/many' });
    expect(pdp.received.map((r) => [r.method, r.path])).toEqual([['GET', '/.well-known/authzen-configuration']]);
  });

  it('a failed fetch fails the decision with its code, and the next decision fetches again', async () => {
    pdp.handler = (_req, res) => answer(res, { error: 'busy' }, 503);
    const endpoints = source();
    const first = await endpoints(deadline());
    expect(first.ok === false && first.code).toBe('pdp_status');
    pdp.handler = documentFor();
    expect((await endpoints(deadline())).ok).toBe(true);
    expect(pdp.received).toHaveLength(2);
  });

  it('a document for another PDP is discarded, and stays discarded (no second fetch)', async () => {
    pdp.handler = documentFor('http://127.0.0.1:1/elsewhere');
    const endpoints = source();
    for (let i = 0; i < 2; i++) {
      const r = await endpoints(deadline());
      expect(r.ok === false && [r.code, r.message]).toEqual(['pdp_unreachable', expect.stringContaining('discarded')]);
    }
    expect(pdp.received).toHaveLength(1);
  });

  it('with a path in pdpUrl: the well-known path before it, then under it after a 404', async () => {
    pdp.handler = (req, res) =>
      req.path === '/realm/.well-known/authzen-configuration'
        ? documentFor(`${pdp.url}/realm`)(req, res, undefined as never)
        : answer(res, {}, 404);
    const r = await source('/realm')(deadline());
    expect(r.ok).toBe(true);
    expect(pdp.received.map((x) => x.path)).toEqual([
      '/.well-known/authzen-configuration/realm',
      '/realm/.well-known/authzen-configuration',
    ]);
  });

  it("a caller's signal already aborted answers aborted, without a fetch", async () => {
    const r = await source()(deadline(), AbortSignal.abort());
    expect(r.ok === false && r.code).toBe('aborted');
    expect(pdp.received).toHaveLength(0);
  });
});
