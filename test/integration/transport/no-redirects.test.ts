/**
 * CONTRACT.md section 3, rule 2: redirects are never followed, whatever `dispatcher` the caller gives.
 * A 3xx is `pdp_status` (not retried), and nothing is sent to the `location`: the second origin counts
 * what reaches it, and must count zero requests and zero bytes.
 */
import { Agent, type Dispatcher, interceptors } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPep, type PolicyDecision } from '../../../src/index.js';
import { allowBody, ok, type RawServer, rawResponse, startRawServer } from './raw-server.js';

let pdp: RawServer;
let elsewhere: RawServer;
const dispatchers: Dispatcher[] = [];

beforeAll(async () => {
  elsewhere = await startRawServer((req, socket) => socket.write(ok(allowBody(req))));
  pdp = await startRawServer(() => {});
});
afterAll(async () => {
  await Promise.all([pdp.close(), elsewhere.close()]);
});
afterEach(async () => {
  await Promise.all(dispatchers.splice(0).map((d) => d.close()));
});

/** The common global set-up of issue 15: an Agent composed with undici's own redirect interceptor. */
function redirectingAgent(): Dispatcher {
  const d = new Agent().compose(interceptors.redirect({ maxRedirections: 3 }));
  dispatchers.push(d);
  return d;
}

/**
 * A redirect interceptor that ignores the per-request `maxRedirections` (as a home-made or older one
 * might): the transport's own check must still stop the second hop before anything is written.
 */
function stubbornRedirectingAgent(): Dispatcher {
  const redirect = interceptors.redirect({ maxRedirections: 3 });
  const d = new Agent().compose((dispatch) => {
    const follow = redirect(dispatch);
    return (opts, handler) => {
      const { maxRedirections: _ignored, ...rest } = opts as Dispatcher.DispatchOptions & { maxRedirections?: number };
      return follow(rest, handler);
    };
  });
  dispatchers.push(d);
  return d;
}

const DISPATCHERS: [string, () => Dispatcher | undefined][] = [
  ['the default pool', () => undefined],
  ['Agent().compose(interceptors.redirect({ maxRedirections: 3 }))', redirectingAgent],
  ['a redirect interceptor that ignores maxRedirections', stubbornRedirectingAgent],
];

async function ask(dispatcher: Dispatcher | undefined): Promise<PolicyDecision> {
  const pep = createPep({
    pdpUrl: pdp.url,
    agentId: 'a',
    session: 's',
    timeoutMs: 2000,
    apiKey: 'k-secret',
    ...(dispatcher ? { dispatcher } : {}),
  });
  try {
    return await pep.checkInput('hello');
  } finally {
    await pep.close();
  }
}

describe.each(DISPATCHERS)('with %s', (_label, make) => {
  it.each([301, 302, 303, 307, 308])(
    'a %i to another origin is pdp_status, not retried, and nothing reaches the location',
    async (status) => {
      const before = { connections: elsewhere.connections, requests: elsewhere.requests, bytes: elsewhere.bytes };
      const pdpBefore = pdp.requests;
      pdp.responder = (_req, socket) =>
        socket.write(
          rawResponse([
            `HTTP/1.1 ${status} Moved`,
            `Location: ${elsewhere.url}/api/policy/authorize`,
            'Content-Length: 0',
          ]),
        );
      const d = await ask(make());
      expect(d.verdict).toBe('BLOCK');
      expect(d.synthesized?.code).toBe('pdp_status');
      expect(d.synthesized?.attempts).toBe(1);
      expect(pdp.requests - pdpBefore).toBe(1);
      expect(elsewhere.requests - before.requests).toBe(0);
      expect(elsewhere.bytes - before.bytes).toBe(0);
    },
  );

  it('a relative location on the same origin is not followed either', async () => {
    const pdpBefore = pdp.requests;
    pdp.responder = (req, socket) => {
      if (req.head.startsWith('POST /api/policy/authorize ')) {
        socket.write(rawResponse(['HTTP/1.1 307 Temporary Redirect', 'Location: /elsewhere', 'Content-Length: 0']));
      } else {
        socket.write(ok(allowBody(req)));
      }
    };
    const d = await ask(make());
    expect(d.synthesized?.code).toBe('pdp_status');
    expect(pdp.requests - pdpBefore).toBe(1);
  });

  it('still enforces a plain 200 ALLOW (the check costs nothing on the way through)', async () => {
    pdp.responder = (req, socket) => socket.write(ok(allowBody(req)));
    const d = await ask(make());
    expect(d.verdict).toBe('ALLOW');
    expect(d.synthesized).toBeUndefined();
  });
});

it('the 3xx status is reported on the synthesized BLOCK when the transport sees it', async () => {
  pdp.responder = (_req, socket) =>
    socket.write(rawResponse(['HTTP/1.1 307 Temporary Redirect', `Location: ${elsewhere.url}/`, 'Content-Length: 0']));
  const d = await ask(redirectingAgent());
  expect(d.synthesized?.code).toBe('pdp_status');
  expect(d.synthesized?.status).toBe(307);
});
