/** Every refused request is logged: one entry with the status and the code, never content, args or keys. */
import { request } from 'node:http';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { postJson } from '../../../../test/support/dev-pdp-http.js';
import { type DevPdp, type RefusedRequest, startDevPdp } from '../../src/index.js';

const POLICY = { agents: ['support-ai'], latches: [] };

/** A GET whose request target is sent byte for byte (fetch would resolve `//` and `..`); resolves with the status. */
function rawGet(base: string, path: string): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/`, { path }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end();
  });
}
const CANARY = 'canary-7f3a9c';
const started: DevPdp[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(started.splice(0).map((pdp) => pdp.close()));
});

async function start(log: ((r: RefusedRequest) => void) | false | undefined): Promise<DevPdp> {
  const pdp = await startDevPdp({ policy: POLICY, apiKey: `key-${CANARY}`, ...(log !== undefined ? { log } : {}) });
  started.push(pdp);
  return pdp;
}

describe('refused requests are logged through the log option', () => {
  test('a function gets status, code, method and route of each refusal, and nothing of the request', async () => {
    const seen: RefusedRequest[] = [];
    const pdp = await start((r) => seen.push(r));
    const auth = { authorization: `Bearer key-${CANARY}` };
    const body = { agentId: `agent-${CANARY}`, session: 's', stage: 'input', content: `text-${CANARY}` };
    await postJson(pdp.url, '/api/policy/authorize', body, { headers: { ...auth, 'x-request-id': 'rid-1' } });
    await postJson(
      pdp.url,
      '/api/policy/authorize',
      { ...body, agentId: 'support-ai' },
      { headers: { authorization: `Bearer wrong-${CANARY}` } },
    );
    await postJson(
      pdp.url,
      '/api/policy/authorize',
      { ...body, agentId: 'support-ai', stage: 'action', args: { a: CANARY } },
      { headers: auth },
    );
    await postJson(pdp.url, '/v1/api/policy/authorize?token=secret', {}, { headers: auth });
    await postJson(pdp.url, '/api/policy/authorize', { ...body, agentId: 'support-ai' }, { headers: auth }); // decided: not logged
    expect(seen).toEqual([
      { status: 404, code: 'unknown_agent', method: 'POST', route: '/api/policy/authorize', requestId: 'rid-1' },
      { status: 401, code: 'unauthorized', method: 'POST', route: '/api/policy/authorize' },
      { status: 400, code: 'bad_request', method: 'POST', route: '/api/policy/authorize' },
      // the path it refused, never the query
      { status: 404, code: 'not_found', method: 'POST', route: '(other)', path: '/v1/api/policy/authorize' },
    ]);
    expect(JSON.stringify(seen)).not.toContain('secret');
    expect(JSON.stringify(seen)).not.toContain(CANARY);
  });

  test('by default one line per refusal goes to stderr, without content or keys', async () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const pdp = await start(undefined);
    await postJson(
      pdp.url,
      '/api/policy/authorize',
      { agentId: 'nobody', session: 's', stage: 'input', content: CANARY },
      {
        headers: { authorization: `Bearer key-${CANARY}` },
      },
    );
    vi.restoreAllMocks();
    const ours = lines.filter((line) => line.startsWith('agent-pep dev-pdp:'));
    expect(ours).toHaveLength(1);
    expect(ours[0]).toMatch(/ 404 unknown_agent/);
    expect(ours[0]).not.toContain(CANARY);
  });

  test('the dev PDP logs the path it refused (404 on a wrong path): printable, bounded, on the stderr line', async () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const pdp = await start(undefined);
    await postJson(pdp.url, '/pdp/api/policy/authorize', {}, { headers: { authorization: `Bearer key-${CANARY}` } });
    await postJson(pdp.url, `/${'x'.repeat(500)}`, {});
    await postJson(pdp.url, '/a%0Ab', {});
    vi.restoreAllMocks();
    const ours = lines.filter((line) => line.startsWith('agent-pep dev-pdp:'));
    expect(ours[0]).toBe('agent-pep dev-pdp: refused POST (other) (path /pdp/api/policy/authorize) 404 not_found\n');
    expect(ours[1]).toContain(`(path /${'x'.repeat(199)}...)`);
    expect(ours[2]).toContain('(path /a%250Ab)');
  });

  test('the path is logged as received: a pdpUrl ending in / asks //.well-known/jwks.json, refused as that', async () => {
    const seen: RefusedRequest[] = [];
    const pdp = await start((r) => seen.push(r));
    const statuses: (number | undefined)[] = [];
    for (const path of ['//.well-known/jwks.json', '/api/../.well-known/jwks.json', '//.well-known/jwks.json?x=1']) {
      statuses.push(await rawGet(pdp.url, path));
    }
    expect(statuses).toEqual([404, 404, 404]);
    expect(seen.map((r) => [r.route, r.path])).toEqual([
      ['(other)', '//.well-known/jwks.json'],
      ['(other)', '/api/../.well-known/jwks.json'],
      ['(other)', '//.well-known/jwks.json'],
    ]);
    // the path as the PEP should have asked it is served
    expect(await rawGet(pdp.url, '/.well-known/jwks.json')).toBe(200);
  });

  test('log: false logs nothing; a log function that throws changes no answer', async () => {
    const write = vi.spyOn(process.stderr, 'write');
    const quiet = await start(false);
    await postJson(quiet.url, '/api/policy/authorize', {});
    expect(write.mock.calls.filter((c) => String(c[0]).startsWith('agent-pep dev-pdp:'))).toHaveLength(0);
    const throwing = await start(() => {
      throw new Error('logger down');
    });
    const reply = await postJson(throwing.url, '/api/policy/authorize', {});
    expect(reply.status).toBe(401);
    expect(reply.body.code).toBe('unauthorized');
  });
});
