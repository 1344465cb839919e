/** The hook's dispatcher on node:http (src/transport/node-http.ts): what it reports to undici's handler API. */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import type { Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headersOf, NodeHttpDispatcher } from '../../../src/transport/node-http.js';

const execFileAsync = promisify(execFile);

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

/**
 * Runs `script` (an ES module that imports `./node-http.mjs`, this dispatcher transpiled as it is) in a
 * fresh Node started with `nodeArgs`, and resolves with what it printed.
 */
async function inFreshNode(nodeArgs: string[], script: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'node-http-'));
  try {
    const source = await readFile(new URL('../../../src/transport/node-http.ts', import.meta.url), 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    await writeFile(join(dir, 'node-http.mjs'), outputText);
    // Its one import of this package: the mark of a dispatcher the client owns.
    const owned = await readFile(new URL('../../../src/transport/owned.ts', import.meta.url), 'utf8');
    const ownedJs = ts.transpileModule(owned, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    await writeFile(join(dir, 'owned.js'), ownedJs);
    await writeFile(join(dir, 'main.mjs'), script);
    const { stdout } = await execFileAsync(process.execPath, [...nodeArgs, join(dir, 'main.mjs')], {
      env: { ...process.env, NODE_OPTIONS: '' },
      timeout: 15_000,
    });
    return stdout.trim();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the strict HTTP parser, whatever the process flags', () => {
  // `agent-pep hook` inherits NODE_OPTIONS from its host: `--insecure-http-parser` there must not let
  // node:http accept what undici's own parser refuses (Content-Length and Transfer-Encoding together,
  // bare-LF line ends: the framing request smuggling rides on).
  it.each([
    [
      'Content-Length and Transfer-Encoding together',
      'HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 3\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n2\\r\\n{}\\r\\n0\\r\\n\\r\\n',
    ],
    ['bare LF line ends', 'HTTP/1.1 200 OK\\nContent-Type: application/json\\nContent-Length: 2\\n\\n{}'],
  ])('a response with %s is an HPE_ error under --insecure-http-parser', async (_label, wire) => {
    const out = await inFreshNode(
      ['--no-warnings', '--insecure-http-parser'],
      `
import net from 'node:net';
import { NodeHttpDispatcher } from './node-http.mjs';
const server = net.createServer((s) => { s.on('error', () => {}); s.once('data', () => s.write('${wire}')); });
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const d = new NodeHttpDispatcher();
const calls = [];
await new Promise((done) => d.dispatch(
  { origin: 'http://127.0.0.1:' + server.address().port, path: '/', method: 'POST', headers: {}, body: '{}' },
  {
    onResponseStart: (_c, status) => calls.push('response ' + status),
    onResponseData: () => calls.push('data'),
    onResponseEnd: () => { calls.push('end'); done(); },
    onResponseError: (_c, err) => { calls.push('error ' + String(err.code).slice(0, 4)); done(); },
  },
));
await d.destroy();
server.close();
console.log(calls.join(','));
`,
    );
    expect(out).toBe('error HPE_');
  });
});
