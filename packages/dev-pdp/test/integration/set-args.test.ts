/**
 * A setArgs latch makes an action WARN whose transformedArgs are the args with those paths set, and the
 * permit binds them: the PEP runs the tool with them, and the service accepts the permit only for them.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createMemoryReplayStore, createPep, createPermitVerifier, type Pep } from '../../../../src/index.js';
import { actionHash } from '../../../../src/permit/hash.js';
import { postJson } from '../../../../test/support/dev-pdp-http.js';
import { type DevPdp, startDevPdp } from '../../src/index.js';

const POLICY = {
  agents: ['support-ai'],
  latches: [
    {
      id: 'cap-export',
      stage: 'action',
      tool: 'export_*',
      verdict: 'WARN',
      setArgs: { 'args.limit': 100, 'args.options.redactPii': true },
      reason: 'exports are capped and redacted',
    },
    { id: 'inbox-secrets', stage: 'context_egress', tool: '*read_email*', content: '\\bpassword\\b', verdict: 'BLOCK' },
  ],
};

let pdp: DevPdp;
let pep: Pep;
beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, log: false });
  pep = createPep({
    pdpUrl: pdp.url,
    agentId: 'support-ai',
    session: 's1',
    permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
  });
});
afterAll(async () => {
  await pep.close();
  await pdp.close();
});

describe('setArgs: transformedArgs, bound by the permit', () => {
  test('the decision carries the transformed args; the request args are left as sent', async () => {
    const args = { table: 'customers', limit: 1_000_000 };
    const d = await pep.authorizeAction('export_table', args);
    expect(d.synthesized).toBeUndefined();
    expect(d).toMatchObject({ verdict: 'WARN', latches: ['cap-export'] });
    expect(d.transformedArgs).toEqual({ table: 'customers', limit: 100, options: { redactPii: true } });
    expect(args).toEqual({ table: 'customers', limit: 1_000_000 });
    expect(pdp.evidence().at(-1)?.argsHash).toBe(
      actionHash('export_table', d.transformedArgs as Record<string, unknown>),
    );
  });

  test('guardTool runs the tool with the transformed args, and the service verifies the permit for them only', async () => {
    const verifier = createPermitVerifier({
      keys: pdp.jwksUrl,
      issuer: pdp.issuer,
      audience: 'agent-pep',
      replayStore: createMemoryReplayStore(),
    });
    const ran: unknown[] = [];
    const exportTable = pep.guardTool('export_table', async (args: Record<string, unknown>, { permitId }) => {
      ran.push(args);
      await expect(
        verifier.verify(permitId as string, { tool: 'export_table', args: { table: 'orders', limit: 5 } }),
      ).rejects.toMatchObject({ code: 'permit_args_mismatch' });
      return verifier.verify(permitId as string, { tool: 'export_table', args });
    });
    const claims = await exportTable({ table: 'orders', limit: 5 });
    expect(ran).toEqual([{ table: 'orders', limit: 100, options: { redactPii: true } }]);
    expect(claims.act_hash).toBe(
      actionHash('export_table', { table: 'orders', limit: 100, options: { redactPii: true } }),
    );
  });
});

describe('context_egress: the tool whose result the content is', () => {
  test('a latch tool pattern matches the tool sent on context_egress', async () => {
    const body = (tool?: string) => ({
      agentId: 'support-ai',
      session: 's1',
      stage: 'context_egress',
      content: 'the password is hunter2',
      ...(tool !== undefined ? { tool } : {}),
    });
    const fromInbox = await postJson(pdp.url, '/api/policy/authorize', body('gmailReadEmail'));
    expect(fromInbox.body).toMatchObject({ verdict: 'BLOCK', latches: ['inbox-secrets'] });
    expect(pdp.evidence().at(-1)?.tool).toBe('gmail_read_email');
    expect((await postJson(pdp.url, '/api/policy/authorize', body('web_search'))).body.verdict).toBe('ALLOW');
    expect((await postJson(pdp.url, '/api/policy/authorize', body())).body.verdict).toBe('ALLOW');
  });

  test('tool is refused on the other text stages', async () => {
    const reply = await postJson(pdp.url, '/api/policy/authorize', {
      agentId: 'support-ai',
      session: 's1',
      stage: 'output',
      content: 'x',
      tool: 'a',
    });
    expect(reply.status).toBe(400);
    expect(reply.body.code).toBe('bad_request');
  });
});
