/**
 * The PDPs a runtime under test talks to (issue 42), served by the Node test process on 127.0.0.1:
 * a fake PDP with one route a fail-closed case (test/fixtures/runtimes/suite.js), each a trap that
 * would ALLOW if the rule it guards were broken (the redirect points at an ALLOW, the gzip body and
 * the oversized body are ALLOWs, the duplicate names end in ALLOW), and the dev PDP (permits).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { type DevPdp, startDevPdp } from 'agent-pep/dev-pdp';
import policy from '../../examples/ai/policy.json' with { type: 'json' };

/** What a runtime test needs: the fake PDP's base URL, the dev PDP, and one close. */
export interface RuntimePdps {
  /** Base of the fake PDP; a case is `${fakeUrl}/<case>`. */
  fakeUrl: string;
  devPdp: DevPdp;
  /** The config the portable suite takes (JSON). */
  config: { fakeUrl: string; pdpUrl: string; jwksUrl: string; issuer: string };
  close(): Promise<void>;
}

function allowFor(body: string): string {
  let requestId: unknown;
  try {
    requestId = (JSON.parse(body) as { requestId?: unknown }).requestId;
  } catch {
    requestId = undefined;
  }
  return JSON.stringify({ verdict: 'ALLOW', ...(typeof requestId === 'string' ? { requestId } : {}) });
}

type Route = (res: ServerResponse, body: string, base: string) => void;

const JSON_TYPE = 'application/json';

const ROUTES: Record<string, Route> = {
  hung: () => {},
  redirect: (res, _body, base) => {
    res.writeHead(302, { location: `${base}/allow/api/policy/authorize`, 'content-length': '0' }).end();
  },
  garbage: (res) => {
    res.writeHead(200, { 'content-type': JSON_TYPE }).end('{"verdict": ALLOW');
  },
  'wrong-type': (res, body) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(allowFor(body));
  },
  oversized: (res, body) => {
    const allow = JSON.parse(allowFor(body)) as Record<string, unknown>;
    res.writeHead(200, { 'content-type': JSON_TYPE }).end(JSON.stringify({ ...allow, pad: 'x'.repeat(70_000) }));
  },
  gzip: (res, body) => {
    res.writeHead(200, { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' }).end(gzipSync(allowFor(body)));
  },
  'duplicate-names': (res) => {
    res.writeHead(200, { 'content-type': JSON_TYPE }).end('{"verdict":"BLOCK","verdict":"ALLOW"}');
  },
  allow: (res, body) => {
    res.writeHead(200, { 'content-type': JSON_TYPE }).end(allowFor(body));
  },
};

function handle(base: () => string) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const name = (req.url ?? '').split('/')[1] ?? '';
      const route = ROUTES[name];
      if (route === undefined || !(req.url ?? '').endsWith('/api/policy/authorize')) {
        res.writeHead(404).end();
        return;
      }
      route(res, Buffer.concat(chunks).toString('utf8'), base());
    });
  };
}

/** Starts the fake PDP and the dev PDP (the AI example's policy: refunds allowed, deletions blocked). */
export async function startRuntimePdps(): Promise<RuntimePdps> {
  let fakeUrl = '';
  const server: Server = createServer(handle(() => fakeUrl));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fakeUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const devPdp = await startDevPdp({ policy, port: 0, log: false });
  return {
    fakeUrl,
    devPdp,
    config: { fakeUrl, pdpUrl: devPdp.url, jwksUrl: devPdp.jwksUrl, issuer: devPdp.issuer },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await devPdp.close();
    },
  };
}
