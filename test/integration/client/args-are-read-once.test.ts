/**
 * Defect probe: guardTool snapshots args once; when that snapshot fails, it still calls the stage
 * path, which snapshots the args a SECOND time (client.ts decide: `snapshot ?? snapshotJsonObject(payload.args)`).
 * Args whose getter throws only on the first read therefore reach the PDP, which mints a real permit,
 * and guardTool throws a PolicyBlockedError whose `.decision` is the PDP's ALLOW carrying the whole
 * permit (an enumerable property: any structured logger prints it).
 * Contract: section 2 "args not a plain object of JSON values ... answered, with no network call, by a
 * synthesized BLOCK invalid_request"; section 5 "No error message, log line or event ever contains a
 * whole permit"; a PolicyBlockedError is for "BLOCK (PDP or synthesized)".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPep, PolicyBlockedError } from '../../../src/index.js';
import { type FakePdp, startFakePdp } from '../../support/fake-pdp.js';

const PERMIT = 'eyJhbGciOiJFZERTQSJ9.eyJ0b29sIjoicmVmdW5kX3BheW1lbnQifQ.c2ln';
let pdp: FakePdp;
beforeAll(async () => {
  pdp = await startFakePdp((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ verdict: 'ALLOW', requestId: req.body.requestId, stage: req.body.stage, permitId: PERMIT }),
    );
  });
});
afterAll(async () => {
  await pdp.close();
});

function flakyArgs(): Record<string, unknown> {
  let reads = 0;
  return {
    orderId: 'ord_1',
    get amount() {
      reads++;
      if (reads === 1) throw new Error('first read fails');
      return 10;
    },
  };
}

describe('guardTool with args whose first read throws', () => {
  it('answers invalid_request without asking the PDP, and never carries a permit in the error', async () => {
    const pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's1', permits: false, retries: 0 });
    let executed = 0;
    const tool = pep.guardTool('refund_payment', () => {
      executed++;
      return 'done';
    });
    try {
      const err = await tool(flakyArgs()).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect.soft(executed).toBe(0);
      expect.soft(err).toBeInstanceOf(PolicyBlockedError);
      const e = err as PolicyBlockedError;
      expect.soft(pdp.received.length).toBe(0); // no network call for a request that could not be snapshotted
      expect.soft(e.decision.verdict).toBe('BLOCK');
      expect.soft(e.decision.synthesized?.code).toBe('invalid_request');
      expect.soft(JSON.stringify(e)).not.toContain(PERMIT);
    } finally {
      await pep.close();
    }
  });
});
