// The HTTP hook endpoint (src/hooks/server.ts) on 127.0.0.1 against a real dev PDP: the same answer as
// the process hook for each host's recorded event, and every way a request fails closed (401, 404,
// 405, 413, 503 when the queue is full, the host's deny at its own deadline, with the PDP down or on
// bad input), and a close that lets a request in flight finish.
import { type DevPdp, startDevPdp } from 'agent-pep/dev-pdp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type HookServeRecord, type HookServer, MAX_BODY_BYTES, startHookServer } from '../../../src/hooks/server.js';
import { createPep } from '../../../src/pep.js';
import { runInProcess } from '../../support/cli.js';
import { closedPort, HOST_CASES, HOSTS_POLICY, hookFixture, hungPdp, type Json } from '../../support/hook-hosts.js';

const TOKEN = 'test-token-0123456789';
let pdp: DevPdp;
let hung: { url: string; close(): Promise<void> };
let down: string;
const servers: HookServer[] = [];
const records: HookServeRecord[] = [];

async function serve(pdpUrl: string, extra: { timeoutMs?: number; maxPending?: number } = {}): Promise<HookServer> {
  const pep = createPep({ pdpUrl, agentId: 'coder', session: 'agent-pep-hook', permits: false, timeoutMs: 2000 });
  const s = await startHookServer({
    pep,
    token: TOKEN,
    timeoutMs: extra.timeoutMs ?? 3000,
    maxPending: extra.maxPending ?? 8,
    onRecord: (r) => records.push(r),
  });
  servers.push(s);
  return s;
}

let server: HookServer;
beforeAll(async () => {
  pdp = await startDevPdp({ policy: HOSTS_POLICY, port: 0, log: false });
  hung = await hungPdp();
  down = `http://127.0.0.1:${await closedPort()}`;
  server = await serve(pdp.url);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await pdp.close();
  await hung.close();
});

async function post(s: HookServer, path: string, body: string | Json, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Json) };
}

describe.each(HOST_CASES)('POST /hooks/$host', ({ host, fixture, deny }) => {
  test('answers 200 with what the process hook prints for the same event', async () => {
    const event = hookFixture(fixture);
    const viaHttp = await post(server, `/hooks/${host}`, event);
    const viaProcess = await runInProcess(['hook', host, '--pdp', pdp.url, '--agent', 'coder'], {
      input: JSON.stringify(event),
    });
    expect(viaHttp.status).toBe(200);
    expect(viaHttp.json).toMatchObject(deny);
    expect(viaHttp.json).toEqual(JSON.parse(viaProcess.stdout));
  });

  test('bad input is 200 with the host deny', async () => {
    const r = await post(server, `/hooks/${host}`, '{"session_id":');
    expect(r.status).toBe(200);
    expect(JSON.stringify(r.json)).toMatch(/deny|block/);
  });

  test('with the PDP down: 200 with the host deny', async () => {
    const s = await serve(down);
    const r = await post(s, `/hooks/${host}`, hookFixture(fixture));
    expect(r).toMatchObject({ status: 200, json: deny });
  });
});

describe('refusals never reach the PDP', () => {
  const event = hookFixture('claude-code-pre-tool-use-bash');

  test('401 without the bearer token, or with another', async () => {
    const before = pdp.evidence().length;
    const res = await fetch(`${server.url}/hooks/claude-code`, { method: 'POST', body: JSON.stringify(event) });
    expect(res.status).toBe(401);
    expect((await post(server, '/hooks/claude-code', event, { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await post(server, '/hooks/claude-code', event, { authorization: TOKEN })).status).toBe(401);
    expect(pdp.evidence().length).toBe(before);
  });

  test('404 for another path, 405 for another method', async () => {
    expect((await post(server, '/hooks/windsurf', event)).status).toBe(404);
    expect((await post(server, '/hooks/claude-code/x', event)).status).toBe(404);
    expect((await post(server, '/', event)).status).toBe(404);
    const get = await fetch(`${server.url}/hooks/claude-code`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  test('413 for a body over 1 MiB', async () => {
    const before = pdp.evidence().length;
    const big = JSON.stringify({
      ...hookFixture('claude-code-user-prompt-submit'),
      prompt: 'x'.repeat(MAX_BODY_BYTES),
    });
    expect((await post(server, '/hooks/claude-code', big)).status).toBe(413);
    expect(pdp.evidence().length).toBe(before);
  });

  test('503 with the host deny once the queue is full', async () => {
    const s = await serve(hung.url, { maxPending: 1, timeoutMs: 1500 });
    const first = post(s, '/hooks/cursor', hookFixture('cursor-before-shell-execution'));
    await new Promise((r) => setTimeout(r, 100));
    const second = await post(s, '/hooks/cursor', hookFixture('cursor-before-shell-execution'));
    expect(second).toMatchObject({ status: 503, json: { permission: 'deny' } });
    // The first is answered at the deadline, a deny.
    expect(await first).toMatchObject({ status: 200, json: { permission: 'deny' } });
  });
});

describe('its own deadline', () => {
  test('a hanging PDP: 200 with the host deny by the deadline', async () => {
    const s = await serve(hung.url, { timeoutMs: 400 });
    const started = Date.now();
    const r = await post(s, '/hooks/claude-code', hookFixture('claude-code-pre-tool-use-bash'));
    expect(r).toMatchObject({ status: 200, json: { hookSpecificOutput: { permissionDecision: 'deny' } } });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  test('a body that never ends: the host deny by the deadline', async () => {
    const s = await serve(pdp.url, { timeoutMs: 400 });
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${s.url}/hooks/codex`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-length': '1000' },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.write('{"session_id":');
    });
    expect(status).toBe(200);
  });
});

describe('log records', () => {
  test('one per request, with host, event, what the answer said and status; never content or token', async () => {
    const from = records.length;
    await post(server, '/hooks/codex', hookFixture('codex-pre-tool-use-bash'));
    const r = records.slice(from);
    expect(r).toEqual([{ host: 'codex', event: 'PreToolUse', label: 'deny', status: 200, ms: expect.any(Number) }]);
    expect(JSON.stringify(records)).not.toContain('rm -rf');
    expect(JSON.stringify(records)).not.toContain(TOKEN);
  });
});

describe('log records name why a step failed closed', () => {
  test('a PDP that is down: the record carries the fail-closed code, so the log says why every call is denied', async () => {
    const s = await serve(down);
    const from = records.length;
    await post(s, '/hooks/claude-code', hookFixture('claude-code-pre-tool-use-bash'));
    expect(records.slice(from)).toEqual([
      expect.objectContaining({ host: 'claude-code', event: 'PreToolUse', code: 'pdp_unreachable', status: 200 }),
    ]);
  });
});

describe('close', () => {
  test('lets a request in flight finish, then refuses connections', async () => {
    const s = await serve(hung.url, { timeoutMs: 500 });
    const inFlight = post(s, '/hooks/claude-code', hookFixture('claude-code-pre-tool-use-bash'));
    await new Promise((r) => setTimeout(r, 100));
    await s.close();
    expect((await inFlight).status).toBe(200);
    await expect(fetch(`${s.url}/hooks/claude-code`, { method: 'POST' })).rejects.toThrow();
  });
});
