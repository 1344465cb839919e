/**
 * Never content, args, a permit or an API key in a span, an attribute, an event or a metric
 * (CONTRACT.md section 10). Canary strings go through every stage, the guard helpers, interceptors,
 * WARN transformations and failures; then every exported span and metric is searched for them.
 */
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevPdp } from '../../../packages/dev-pdp/src/index.js';
import { createPep, createPermitVerifier, type PolicyDecision } from '../../../src/index.js';
import { makeOtel } from '../../support/otel.js';

const CANARY = {
  content: 'CANARY-CONTENT-7f3a',
  arg: 'CANARY-ARG-19bd',
  toolArg: 'CANARY-TOOLARG-c0de',
  apiKey: 'CANARY-APIKEY-5e11',
  session: 'CANARY-SESSION-88aa',
  result: 'CANARY-RESULT-4b4b',
  replaced: 'CANARY-REPLACED-d00d',
};

const POLICY = {
  agents: ['support-ai'],
  latches: [
    {
      id: 'redact',
      stage: ['input', 'output', 'delivery', 'context_egress'],
      content: 'CANARY',
      verdict: 'WARN',
      redact: 'CANARY-TRANSFORMED-x',
      reason: 'redacted',
    },
    {
      id: 'cap',
      stage: 'action',
      tool: 'refund_payment',
      when: { 'args.amount': { gt: 10 } },
      verdict: 'WARN',
      setArgs: { 'args.note': 'CANARY-SETARG-77' },
      reason: 'capped',
    },
    { id: 'hold', stage: 'action', tool: 'wire_funds', verdict: 'ESCALATE', reason: 'hold' },
    { id: 'deny', stage: 'action', tool: 'delete_all', verdict: 'BLOCK', reason: 'deny' },
  ],
};

let pdp: Awaited<ReturnType<typeof startDevPdp>>;

beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, port: 0, log: false, apiKey: CANARY.apiKey });
});
afterAll(async () => {
  await pdp.close();
});

/** Every string an exported span carries: name, attributes (keys and values), events, links, status, scope. */
function spanText(s: ReadableSpan): string {
  return JSON.stringify({
    name: s.name,
    attributes: s.attributes,
    events: s.events,
    links: s.links,
    status: s.status,
    scope: s.instrumentationScope,
    resource: s.resource.attributes,
  });
}

describe('no content, args, permit or API key in telemetry', () => {
  it('keeps every canary out of every span, attribute, event and metric, across every stage and path', async () => {
    const otel = makeOtel();
    const telemetry = { tracer: otel.tracer, meter: otel.meter };
    const pep = createPep({
      pdpUrl: pdp.url,
      agentId: 'support-ai',
      session: CANARY.session,
      apiKey: CANARY.apiKey,
      retries: 0,
      permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
      telemetry,
      interceptors: [
        {
          name: 'rewrite',
          stages: ['action'],
          before: (step) =>
            step.tool === 'lookup_order'
              ? { action: 'proceedWith', args: { ...step.args, extra: CANARY.replaced } }
              : { action: 'proceed' },
        },
        {
          name: 'explode',
          stages: ['delivery'],
          before: (step) => {
            if (step.content?.includes('explode')) throw new Error(`boom ${CANARY.content}`);
            return { action: 'proceed' };
          },
        },
      ],
    });
    const decisions: PolicyDecision[] = [];
    const text = `hello ${CANARY.content}`;
    decisions.push(await pep.checkInput(text));
    decisions.push(await pep.checkContextEgress(text, { tool: 'search' }));
    decisions.push(await pep.checkOutput(text));
    decisions.push(await pep.checkDelivery(text));
    decisions.push(await pep.checkDelivery(`explode ${CANARY.content}`));
    decisions.push(await pep.authorizeAction('refund_payment', { amount: 50, memo: CANARY.arg }));
    decisions.push(await pep.authorizeAction('lookup_order', { orderId: CANARY.arg }));
    decisions.push(await pep.authorizeAction('wire_funds', { to: CANARY.arg }));
    decisions.push(await pep.authorizeAction('delete_all', { why: CANARY.arg }));
    decisions.push(await pep.authorizeAction('bad', { v: CANARY.arg, d: new Date() } as never));
    decisions.push(await pep.authorizeAction('lookup_order', { orderId: CANARY.arg }, { simulated: true }));

    // guardTool: the permit check, a result checked at context_egress, and a refusal
    const guarded = pep.guardTool('lookup_order', () => CANARY.result, { checkResult: true });
    expect(await guarded({ orderId: CANARY.toolArg })).not.toContain(CANARY.result);
    await expect(pep.guardTool('wire_funds', () => 1)({ to: CANARY.toolArg })).rejects.toThrow();
    await expect(
      pep.guardTool('lookup_order', () => 1)({ orderId: CANARY.toolArg }, { simulated: true }),
    ).rejects.toThrow();

    // the service side, with a tampered permit and a good one
    const verifier = createPermitVerifier({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: 'agent-pep', telemetry });
    const allowed = await pep.authorizeAction('refund_payment', { amount: 50, memo: CANARY.arg });
    const permit = allowed.permitId as string;
    const [h, p, sig] = permit.split('.') as [string, string, string];
    await expect(
      verifier.verify(`${h}.${p}.${sig.startsWith('A') ? 'B' : 'A'}${sig.slice(1)}`, {
        tool: 'refund_payment',
        args: allowed.transformedArgs ?? {},
      }),
    ).rejects.toThrow();
    await verifier.verify(permit, { tool: 'refund_payment', args: allowed.transformedArgs ?? {} });
    await pep.close();

    const spans = otel.exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThanOrEqual(decisions.length + 3);
    const metrics = JSON.stringify(await otel.points());
    const permits = [...decisions, allowed].map((d) => d.permitId).filter((x): x is string => x !== undefined);
    expect(permits.length).toBeGreaterThan(2);
    const needles = [
      ...Object.values(CANARY),
      'CANARY',
      ...permits,
      ...permits.map((x) => x.split('.')[2] as string),
      ...permits.map((x) => x.split('.')[1] as string),
    ];
    const haystacks = [...spans.map(spanText), metrics];
    for (const hay of haystacks) {
      for (const needle of needles) expect(hay.includes(needle), `found ${needle.slice(0, 24)}`).toBe(false);
    }
    // and the search itself can find what it looks for: the recorded ids are there
    expect(haystacks.join('\n')).toContain(decisions[0]?.requestId as string);
    await otel.shutdown();
  });
});
