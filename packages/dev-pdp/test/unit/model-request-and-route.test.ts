/** Latches for model-request checks (purpose, modelSettings) and for routing an action to a sandbox (route). */
import { describe, expect, test } from 'vitest';
import { evaluatePolicy } from '../../src/evaluate.js';
import { compilePolicy, InvalidPolicyError, type LatchSpec } from '../../src/policy.js';

function policyOf(...latches: LatchSpec[]) {
  return compilePolicy({ agents: ['a'], latches });
}

const SETTINGS = JSON.stringify({ model: 'big-1', temperature: 1.2, maxOutputTokens: 8000 });
const modelRequest = (content = SETTINGS) => ({ stage: 'context_egress', purpose: 'model_request', content }) as const;
const CAP: LatchSpec = {
  id: 'cap',
  stage: 'context_egress',
  purpose: 'model_request',
  verdict: 'WARN',
  modelSettings: { maxOutputTokens: 1024, temperature: 2 },
};

function issuePaths(latch: LatchSpec): string[] {
  try {
    policyOf(latch);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidPolicyError);
    return (error as InvalidPolicyError).issues.map((i) => i.path);
  }
  return [];
}

describe('purpose: "model_request" latches engage on model-request checks only', () => {
  test('a purpose latch engages on a model request and not on other context_egress content', () => {
    const p = policyOf({ id: 'm', stage: 'context_egress', purpose: 'model_request', verdict: 'BLOCK' });
    expect(evaluatePolicy(p, modelRequest()).verdict).toBe('BLOCK');
    expect(evaluatePolicy(p, { stage: 'context_egress', content: SETTINGS }).verdict).toBe('ALLOW');
  });

  test('a latch without purpose engages on every request of its stage, model requests included', () => {
    const p = policyOf({ id: 'secret', stage: 'context_egress', content: 'big-1', verdict: 'BLOCK' });
    expect(evaluatePolicy(p, modelRequest()).verdict).toBe('BLOCK');
  });
});

describe('modelSettings: a WARN caps numbers and replaces texts of the settings', () => {
  test('a number above the cap is lowered, one below stays, the JSON keeps the SDK key order', () => {
    const out = evaluatePolicy(policyOf(CAP), modelRequest());
    expect(out.verdict).toBe('WARN');
    expect(JSON.parse(out.transformedContent as string)).toEqual({
      model: 'big-1',
      temperature: 1.2,
      maxOutputTokens: 1024,
    });
    expect(Object.keys(JSON.parse(out.transformedContent as string))).toEqual([
      'model',
      'temperature',
      'maxOutputTokens',
    ]);
  });

  test('a cap on a setting the request lacks sets it; a text is replaced', () => {
    const p = policyOf({ ...CAP, modelSettings: { topP: 0.5, model: 'small-1' } });
    const out = evaluatePolicy(p, modelRequest(JSON.stringify({ model: 'big-1' })));
    expect(JSON.parse(out.transformedContent as string)).toEqual({ model: 'small-1', topP: 0.5 });
  });

  test('two caps: the lower number wins whatever the order', () => {
    const p = policyOf(CAP, { ...CAP, id: 'cap2', modelSettings: { maxOutputTokens: 4000 } });
    const out = evaluatePolicy(p, modelRequest());
    expect(JSON.parse(out.transformedContent as string).maxOutputTokens).toBe(1024);
  });

  test('a BLOCK beside a cap blocks, with no transformed content', () => {
    const p = policyOf(CAP, { id: 'no', stage: 'context_egress', purpose: 'model_request', verdict: 'BLOCK' });
    const out = evaluatePolicy(p, modelRequest());
    expect(out.verdict).toBe('BLOCK');
    expect(out.transformedContent).toBeUndefined();
  });

  test('settings that are not a JSON object cannot be capped: BLOCK (fail closed)', () => {
    const out = evaluatePolicy(policyOf(CAP), modelRequest('[1,2]'));
    expect(out.verdict).toBe('BLOCK');
    expect(out.transformedContent).toBeUndefined();
  });

  test.each([
    [{ ...CAP, purpose: undefined }, 'latches[0].modelSettings'],
    [{ ...CAP, verdict: 'BLOCK' }, 'latches[0].modelSettings'],
    [{ ...CAP, stage: 'output' }, 'latches[0].purpose'],
    [{ ...CAP, modelSettings: {} }, 'latches[0].modelSettings'],
    [{ ...CAP, modelSettings: { maxOutputTokens: 1.5 } }, 'latches[0].modelSettings.maxOutputTokens'],
    [{ ...CAP, modelSettings: { temperature: -1 } }, 'latches[0].modelSettings.temperature'],
    [{ ...CAP, modelSettings: { instructions: 'x' } }, 'latches[0].modelSettings'],
  ] as [LatchSpec, string][])('a modelSettings that could never apply is refused (%#)', (latch, path) => {
    expect(issuePaths(latch)).toContain(path);
  });
});

describe('route: an action WARN names the sandbox the action runs in', () => {
  const ROUTE: LatchSpec = {
    id: 'sandbox-shell',
    stage: 'action',
    tool: 'run_shell',
    verdict: 'WARN',
    route: { to: 'docker', profile: 'no-network' },
  };

  test('the route of the engaged latch is the evaluation route', () => {
    const out = evaluatePolicy(policyOf(ROUTE), { stage: 'action', tool: 'run_shell', args: {} });
    expect(out).toMatchObject({ verdict: 'WARN', route: { to: 'docker', profile: 'no-network' } });
    expect(evaluatePolicy(policyOf(ROUTE), { stage: 'action', tool: 'read_file', args: {} }).route).toBeUndefined();
  });

  test('a BLOCK that engages too wins: no route', () => {
    const p = policyOf(ROUTE, { id: 'no', stage: 'action', tool: 'run_*', verdict: 'BLOCK' });
    const out = evaluatePolicy(p, { stage: 'action', tool: 'run_shell', args: {} });
    expect(out.verdict).toBe('BLOCK');
    expect(out.route).toBeUndefined();
  });

  test('two engaged latches routing to different sandboxes make a BLOCK (fail closed)', () => {
    const p = policyOf(ROUTE, { ...ROUTE, id: 'other', route: { to: 'firecracker' } });
    const out = evaluatePolicy(p, { stage: 'action', tool: 'run_shell', args: {} });
    expect(out.verdict).toBe('BLOCK');
    expect(out.route).toBeUndefined();
  });

  test('the same route twice is one route', () => {
    const p = policyOf(ROUTE, { ...ROUTE, id: 'again' });
    expect(evaluatePolicy(p, { stage: 'action', tool: 'run_shell', args: {} }).route).toEqual(ROUTE.route);
  });

  test.each([
    [{ ...ROUTE, verdict: 'ALLOW' }, 'latches[0].route'],
    [{ ...ROUTE, stage: ['action', 'output'] }, 'latches[0].route'],
    [{ ...ROUTE, route: { to: '' } }, 'latches[0].route.to'],
    [{ ...ROUTE, route: { to: 'x'.repeat(129) } }, 'latches[0].route.to'],
    [{ ...ROUTE, route: { to: 'docker', image: 'x' } }, 'latches[0].route'],
  ] as [LatchSpec, string][])('a route that could never apply is refused (%#)', (latch, path) => {
    expect(issuePaths(latch)).toContain(path);
  });
});
