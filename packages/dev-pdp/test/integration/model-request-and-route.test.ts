/**
 * The SDK against the dev PDP, both protocols: a model-request check (`context_egress`,
 * `purpose: "model_request"`) is decided by the policy, whose `modelSettings` WARN caps the settings;
 * a `route` WARN makes `guardTool` run the action in the sandbox `createPep({ sandboxes })` registers,
 * never the tool.
 */
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { createPep, type Pep, type SandboxCall } from '../../../../src/index.js';
import { postJson } from '../../../../test/support/dev-pdp-http.js';
import { type DevPdp, startDevPdp } from '../../src/index.js';

const POLICY = {
  agents: ['support-ai'],
  latches: [
    {
      id: 'cap-tokens',
      stage: 'context_egress',
      purpose: 'model_request',
      verdict: 'WARN',
      modelSettings: { maxOutputTokens: 1024, model: 'small-model' },
      reason: 'requests are capped',
    },
    {
      id: 'no-huge-model',
      stage: 'context_egress',
      purpose: 'model_request',
      content: '"model":"huge-model"',
      verdict: 'BLOCK',
    },
    {
      id: 'shell-in-sandbox',
      stage: 'action',
      tool: 'run_shell',
      verdict: 'WARN',
      route: { to: 'proc', profile: 'no-network' },
    },
  ],
};
const REQUEST = { model: 'big-model', system: 'Be helpful.', temperature: 0.9, maxOutputTokens: 4096 };

let pdp: DevPdp;
beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, log: false });
});
afterAll(() => pdp.close());

function pepFor(protocol: 'agent-pep' | 'authzen', runner: (call: SandboxCall) => unknown): Pep {
  return createPep({
    pdpUrl: pdp.url,
    protocol,
    agentId: 'support-ai',
    session: `s-${protocol}-${Math.random()}`,
    permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
    sandboxes: { proc: runner },
  });
}

describe.each(['agent-pep', 'authzen'] as const)('over %s', (protocol) => {
  test('a modelSettings WARN caps maxOutputTokens and replaces the model; the rest is left as sent', async () => {
    const pep = pepFor(protocol, () => undefined);
    const d = await pep.checkModelRequest(REQUEST);
    expect(d.synthesized).toBeUndefined();
    expect(d).toMatchObject({ verdict: 'WARN', latches: ['cap-tokens'] });
    expect(JSON.parse(d.transformedContent as string)).toEqual({
      ...REQUEST,
      model: 'small-model',
      maxOutputTokens: 1024,
    });
    await pep.close();
  });

  test('a policy BLOCK on a model request stops it (a PDP decision, not pdp_status)', async () => {
    const pep = pepFor(protocol, () => undefined);
    const d = await pep.checkModelRequest({ ...REQUEST, model: 'huge-model' });
    expect(d.synthesized).toBeUndefined();
    expect(d.verdict).toBe('BLOCK');
    expect(d.latches).toContain('no-huge-model');
    await pep.close();
  });

  test('a route WARN: guardTool runs the sandbox runner with the permit, never the tool', async () => {
    const runner = vi.fn(async (call: SandboxCall) => `sandboxed ${call.tool} (${call.profile})`);
    const pep = pepFor(protocol, runner);
    const body = vi.fn(async () => 'ran on the host');
    const shell = pep.guardTool('run_shell', body);
    await expect(shell({ command: 'ls' })).resolves.toBe('sandboxed run_shell (no-network)');
    expect(body).not.toHaveBeenCalled();
    expect(runner).toHaveBeenCalledTimes(1);
    const call = runner.mock.calls[0]?.[0] as SandboxCall;
    expect(call.args).toEqual({ command: 'ls' });
    expect(typeof call.permitId).toBe('string');
    expect(call.decision.route).toEqual({ to: 'proc', profile: 'no-network' });
    // a tool no route latch names runs as itself
    const other = vi.fn(async () => 'host');
    await expect(pep.guardTool('read_file', other)({})).resolves.toBe('host');
    await pep.close();
  });
});

describe('the wire', () => {
  test('purpose model_request belongs to context_egress, with a JSON object of settings as content', async () => {
    const base = { agentId: 'support-ai', session: 'w', purpose: 'model_request' };
    const ok = await postJson(pdp.url, '/api/policy/authorize', {
      ...base,
      stage: 'context_egress',
      content: JSON.stringify({ maxOutputTokens: 9000 }),
    });
    expect(ok.status).toBe(200);
    expect(JSON.parse((ok.body as { transformedContent: string }).transformedContent)).toEqual({
      model: 'small-model',
      maxOutputTokens: 1024,
    });
    for (const bad of [
      { stage: 'output', content: '{}' },
      { stage: 'context_egress', content: 'not json' },
      { stage: 'context_egress', content: '[]' },
      { stage: 'action', tool: 'x', args: {} },
    ]) {
      const res = await postJson(pdp.url, '/api/policy/authorize', { ...base, ...bad });
      expect(res.status).toBe(400);
    }
  });
});
