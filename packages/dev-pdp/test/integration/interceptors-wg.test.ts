/**
 * The MCP Interceptors WG behaviour fixtures (test/fixtures/interceptors-wg, Apache-2.0, copied from
 * modelcontextprotocol/experimental-ext-interceptors) replayed as sessions against the dev PDP with the
 * policy shipped for them: relaybleed (a secret read from one server written to another) is denied;
 * same-origin write-back, a value with no prior read and another session's value are allowed; a
 * redacting mutation interceptor lets the flow through without the secret. Each step gets the decision
 * its fixture expects. The mapping is in the fixtures' README.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, test } from 'vitest';
import type { Interceptor, Pep, PolicyDecision } from '../../../../src/index.js';
import { sessionHarness } from '../../../../test/support/sessions.js';

const DIR = new URL('../../../../test/fixtures/interceptors-wg/', import.meta.url);
const POLICY = JSON.parse(readFileSync(new URL('policy.json', DIR), 'utf8')) as {
  values: { name: string; pattern: string }[];
};

interface Step {
  phase: 'request' | 'response';
  payload: { name?: string; arguments?: Record<string, unknown>; content?: { type: string; text: string }[] };
  context: { sessionId: string };
  expect: { decision: 'allow' | 'deny'; forbids?: string[] };
}
interface Fixture {
  id: string;
  interceptors: { behavior: string; type: string }[];
  steps: Step[];
}

const fixtures: [string, Fixture][] = readdirSync(new URL('behavior/', DIR))
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => [f, JSON.parse(readFileSync(new URL(`behavior/${f}`, DIR), 'utf8')) as Fixture]);

/** The WG's `secretless-redactor` as a local `before` interceptor: every secret of the policy's formats replaced. */
const SECRETS = POLICY.values.map((v) => ({ name: v.name, re: new RegExp(v.pattern, 'g') }));
function redact(value: unknown): unknown {
  if (typeof value === 'string') return SECRETS.reduce((s, { name, re }) => s.replace(re, `[secret:${name}]`), value);
  if (Array.isArray(value)) return value.map(redact);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]));
  }
  return value;
}
const redactor: Interceptor = {
  name: 'secretless-redactor',
  stages: ['action'],
  before: (step) => ({ action: 'proceedWith', args: redact(step.args) as Record<string, unknown> }),
};

const harness = sessionHarness(POLICY);
afterEach(() => harness.closeAll());

const allowed = (d: PolicyDecision) => d.verdict === 'ALLOW' || d.verdict === 'WARN';

describe('MCP Interceptors WG behaviour fixtures', () => {
  test('every fixture of the WG is here, with its licence', () => {
    expect(fixtures.map(([f]) => f)).toHaveLength(10);
    expect(readFileSync(new URL('LICENSE', DIR), 'utf8')).toContain('Apache License');
  });

  test.each(fixtures)('%s', async (_file, fixture) => {
    const pdp = await harness.start();
    const mutates = fixture.interceptors.some((i) => i.behavior === 'secretless-redactor');
    const peps = new Map<string, Pep>();
    const lastTool = new Map<string, string>();
    const pepFor = (session: string): Pep => {
      let pep = peps.get(session);
      if (pep === undefined) {
        pep = harness.pepOf(pdp, session, { agentId: 'wg-agent', ...(mutates ? { interceptors: [redactor] } : {}) });
        peps.set(session, pep);
      }
      return pep;
    };
    for (const [i, step] of fixture.steps.entries()) {
      const session = step.context.sessionId;
      const pep = pepFor(session);
      let decision: PolicyDecision;
      let ran: unknown;
      if (step.phase === 'request') {
        const name = step.payload.name as string;
        lastTool.set(session, name);
        decision = await pep.authorizeAction(name, step.payload.arguments ?? {});
        ran = decision.transformedArgs ?? step.payload.arguments;
      } else {
        const text = (step.payload.content ?? []).map((c) => c.text).join('\n');
        const tool = lastTool.get(session);
        decision = await pep.checkContextEgress(text, tool === undefined ? {} : { tool });
        ran = decision.transformedContent ?? text;
      }
      const where = `${fixture.id} step ${i}`;
      expect(decision.synthesized, where).toBeUndefined();
      expect(allowed(decision) ? 'allow' : 'deny', where).toBe(step.expect.decision);
      if (step.expect.decision === 'deny') expect(decision.verdict, where).toBe('BLOCK');
      for (const secret of step.expect.forbids ?? []) expect(JSON.stringify(ran), where).not.toContain(secret);
    }
  });
});
