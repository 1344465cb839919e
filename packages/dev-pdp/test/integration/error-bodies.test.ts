/** Every refusal of the dev PDP is a JSON `{ code, message }` body with the right status (CONTRACT.md section 6). */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { postJson } from '../../../../test/support/dev-pdp-http.js';
import { REFUND_REVIEW } from '../../../../test/support/policies.js';
import { type DevPdp, startDevPdp } from '../../src/index.js';

let pdp: DevPdp;
beforeAll(async () => {
  pdp = await startDevPdp({
    policy: { agents: ['support-ai'], latches: [REFUND_REVIEW] },
    apiKey: 'k',
    maxBodyBytes: 2048,
    log: false,
  });
});
afterAll(() => pdp.close());

const auth = { authorization: 'Bearer k' };
const action = (tool: string, extra: Record<string, unknown> = {}) => ({
  agentId: 'support-ai',
  session: 's',
  stage: 'action',
  tool,
  args: {},
  ...extra,
});

describe('error bodies are { code, message }', () => {
  test.each<[string, number, string, () => Promise<unknown>]>([
    ['no API key', 401, 'unauthorized', () => postJson(pdp.url, '/api/policy/authorize', action('t'))],
    [
      'an agent the policy does not list',
      404,
      'unknown_agent',
      () => postJson(pdp.url, '/api/policy/authorize', action('t', { agentId: 'other' }), { headers: auth }),
    ],
    [
      'a malformed request',
      400,
      'bad_request',
      () => postJson(pdp.url, '/api/policy/authorize', { stage: 'action' }, { headers: auth }),
    ],
    ['an unknown endpoint', 404, 'not_found', () => postJson(pdp.url, '/api/nothing', {}, { headers: auth })],
    [
      'a body over maxBodyBytes',
      413,
      'too_large',
      () =>
        postJson(pdp.url, '/api/policy/authorize', action('t', { args: { pad: 'x'.repeat(4096) } }), { headers: auth }),
    ],
    [
      'a body that is not application/json',
      415,
      'unsupported_media_type',
      () =>
        postJson(pdp.url, '/api/policy/authorize', action('t'), {
          headers: { ...auth, 'content-type': 'text/plain' },
        }),
    ],
    [
      'a charset other than utf-8',
      415,
      'unsupported_media_type',
      () =>
        postJson(pdp.url, '/api/policy/authorize', action('t'), {
          headers: { ...auth, 'content-type': 'application/json; charset=utf-16' },
        }),
    ],
  ])('%s: %i %s', async (_what, status, code, call) => {
    const reply = (await call()) as { status: number; body: Record<string, unknown>; headers: Headers };
    expect(reply.status).toBe(status);
    expect(reply.body).toEqual({ code, message: expect.any(String) });
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

describe('tool names are at most 256 characters', () => {
  test('257 characters is a 400 bad_request; 256 is decided', async () => {
    const long = await postJson(pdp.url, '/api/policy/authorize', action('t'.repeat(257)), { headers: auth });
    expect(long.status).toBe(400);
    expect(long.body.code).toBe('bad_request');
    const ok = await postJson(pdp.url, '/api/policy/authorize', action('t'.repeat(256)), { headers: auth });
    expect(ok.status).toBe(200);
    expect(ok.body.verdict).toBe('ALLOW');
  });

  test('the same holds for a tool on context_egress', async () => {
    const body = { agentId: 'support-ai', session: 's', stage: 'context_egress', content: 'x', tool: 'a'.repeat(257) };
    const reply = await postJson(pdp.url, '/api/policy/authorize', body, { headers: auth });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('bad_request');
  });
});
