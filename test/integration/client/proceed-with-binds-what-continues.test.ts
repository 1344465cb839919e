/**
 * What continues is exactly what was decided (CONTRACT.md section 7, v3): after a `proceedWith`, the
 * decision carries the replacement as `transformedContent` (text) or `transformedArgs` (action), or the
 * PDP's WARN transform of it, even when the PDP answered ALLOW. BLOCK and ESCALATE carry neither.
 */
import { describe, expect, it } from 'vitest';
import type { Interceptor } from '../../../src/index.js';
import { answer } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp();
const { clients } = fake;

const redactSsn: Interceptor = {
  name: 'redact-ssn',
  stages: ['input', 'output', 'delivery', 'context_egress'],
  before: (step) => ({ action: 'proceedWith', content: String(step.content).replace(/\d{3}-\d{2}-\d{4}/g, '[ssn]') }),
};
const addTrace: Interceptor = {
  name: 'trace-id',
  stages: ['action'],
  before: (step) => ({ action: 'proceedWith', args: { ...step.args, traceId: 't-1' } }),
};

describe('a text proceedWith', () => {
  it('is the decision transformedContent on a PDP ALLOW', async () => {
    const pep = clients.client({ interceptors: [redactSsn] });
    const d = await pep.checkInput('my ssn is 123-45-6789');
    expect(d.verdict).toBe('ALLOW');
    expect(fake.pdp.received[0]?.body.content).toBe('my ssn is [ssn]');
    expect(d.transformedContent).toBe('my ssn is [ssn]');
  });

  it("keeps the PDP's WARN transform of the replacement", async () => {
    fake.pdp.handler = (req, res) =>
      answer(res, { verdict: 'WARN', requestId: req.body.requestId, transformedContent: 'pdp said so' });
    const d = await clients.client({ interceptors: [redactSsn] }).checkOutput('123-45-6789');
    expect(d.transformedContent).toBe('pdp said so');
  });

  it('is not carried on a BLOCK', async () => {
    fake.pdp.handler = (req, res) => answer(res, { verdict: 'BLOCK', requestId: req.body.requestId, reason: 'no' });
    const d = await clients.client({ interceptors: [redactSsn] }).checkDelivery('123-45-6789');
    expect(d.verdict).toBe('BLOCK');
    expect(d.transformedContent).toBeUndefined();
  });

  it('without a proceedWith an ALLOW carries no transformedContent', async () => {
    const d = await clients.client().checkInput('my ssn is 123-45-6789');
    expect(d.transformedContent).toBeUndefined();
  });
});

describe('an action proceedWith', () => {
  it('is the decision transformedArgs on a PDP ALLOW (plain authorizeAction)', async () => {
    fake.pdp.handler = (req, res) => answer(res, { verdict: 'ALLOW', requestId: req.body.requestId, permitId: 'p' });
    const d = await clients.client({ interceptors: [addTrace] }).authorizeAction('lookup', { id: 1 });
    expect(d.verdict).toBe('ALLOW');
    expect(fake.pdp.received[0]?.body.args).toEqual({ id: 1, traceId: 't-1' });
    expect(d.transformedArgs).toEqual({ id: 1, traceId: 't-1' });
  });

  it('is carried by each decision of authorizeActions', async () => {
    fake.pdp.handler = (req, res) => answer(res, { verdict: 'ALLOW', requestId: req.body.requestId, permitId: 'p' });
    const ds = await clients.client({ interceptors: [addTrace] }).authorizeActions([
      { tool: 'a', args: { n: 1 } },
      { tool: 'b', args: { n: 2 } },
    ]);
    expect(ds.map((d) => d.transformedArgs)).toEqual([
      { n: 1, traceId: 't-1' },
      { n: 2, traceId: 't-1' },
    ]);
  });

  it('is not carried on an ESCALATE', async () => {
    fake.pdp.handler = (req, res) =>
      answer(res, { verdict: 'ESCALATE', requestId: req.body.requestId, escalationId: 'e' });
    const d = await clients.client({ interceptors: [addTrace] }).authorizeAction('lookup', { id: 1 });
    expect(d.transformedArgs).toBeUndefined();
  });
});
