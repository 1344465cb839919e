/** The hook's dispatcher on node:http (src/transport/node-http.ts): what it reports to undici's handler API. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headersOf, NodeHttpDispatcher } from '../../../src/transport/node-http.js';

/** A handler that records the calls it gets, in order, and settles when the exchange ends. */
function recorder() {
  const calls: string[] = [];
  let errorCode: unknown;
  let done!: () => void;
  const ended = new Promise<void>((resolve) => {
    done = resolve;
  });
  const handler: Dispatcher.DispatchHandler = {
    onRequestStart: () => void calls.push('start'),
    onResponseStart: (_c, status) => void calls.push(`response ${status}`),
    onResponseData: () => void calls.push('data'),
    onResponseEnd: () => {
      calls.push('end');
      done();
    },
    onResponseError: (_c, err) => {
      calls.push('error');
      errorCode = (err as { code?: unknown }).code;
      done();
    },
  };
  return { handler, calls, ended, errorCode: () => errorCode };
}

let server: Server;
let origin: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hang') return; // never answers
    res.setHeader('content-type', 'application/json');
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('headersOf', () => {
  it('lower-cases names and keeps a repeated header as an array, in order', () => {
    const h = headersOf(['Content-Type', 'application/json', 'X-A', '1', 'x-a', '2', 'X-A', '3']);
    expect(h['content-type']).toBe('application/json');
    expect(h['x-a']).toEqual(['1', '2', '3']);
  });
});

describe('NodeHttpDispatcher', () => {
  it('reports start, the response, its data and its end, once each in that order', async () => {
    const d = new NodeHttpDispatcher();
    const r = recorder();
    d.dispatch({ origin, path: '/', method: 'POST', headers: {}, body: '{}' }, r.handler);
    await r.ended;
    expect(r.calls).toEqual(['start', 'response 200', 'data', 'end']);
    await d.destroy();
  });

  it('an abort at the request start sends nothing and reports the abort once', async () => {
    const d = new NodeHttpDispatcher();
    const r = recorder();
    const reason = Object.assign(new Error('no'), { code: 'ABORTED_AT_START' });
    r.handler.onRequestStart = (c) => {
      r.calls.push('start');
      c.abort(reason);
    };
    d.dispatch({ origin, path: '/', method: 'POST', headers: {}, body: '{}' }, r.handler);
    await r.ended;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(r.calls).toEqual(['start', 'error']);
    expect(r.errorCode()).toBe('ABORTED_AT_START');
    await d.destroy();
  });

  it('an abort of a request waiting for its answer reports the abort once, and nothing after it', async () => {
    const d = new NodeHttpDispatcher();
    const r = recorder();
    let controller: Dispatcher.DispatchController | undefined;
    r.handler.onRequestStart = (c) => {
      controller = c;
    };
    d.dispatch({ origin, path: '/hang', method: 'POST', headers: {}, body: '{}' }, r.handler);
    await new Promise((resolve) => setTimeout(resolve, 30));
    controller?.abort(Object.assign(new Error('deadline'), { code: 'DEADLINE' }));
    await r.ended;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(r.calls).toEqual(['error']);
    expect(r.errorCode()).toBe('DEADLINE');
    expect(controller?.aborted).toBe(true);
    await d.destroy();
  });

  it('a destroyed dispatcher sends nothing and reports UND_ERR_DESTROYED', async () => {
    const d = new NodeHttpDispatcher();
    await d.destroy();
    expect(d.destroyed).toBe(true);
    const r = recorder();
    d.dispatch({ origin, path: '/', method: 'POST', headers: {}, body: '{}' }, r.handler);
    await r.ended;
    expect(r.calls).toEqual(['error']);
    expect(r.errorCode()).toBe('UND_ERR_DESTROYED');
  });

  it.each([['ftp://127.0.0.1:21'], ['not a url']])(
    'an origin %s sends nothing and reports ERR_INVALID_URL',
    async (o) => {
      const d = new NodeHttpDispatcher();
      const r = recorder();
      d.dispatch({ origin: o, path: '/', method: 'POST', headers: {}, body: '{}' }, r.handler);
      await r.ended;
      expect(r.calls).toEqual(['error']);
      expect(r.errorCode()).toBe('ERR_INVALID_URL');
    },
  );
});
