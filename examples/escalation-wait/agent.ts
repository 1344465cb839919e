/**
 * Waiting for a review, then retrying the identical call: a refund over 500 is held (ESCALATE); the
 * agent waits with `pep.awaitResolution` while a reviewer, outside any console, lists what waits
 * (`GET /api/escalations`, reviewer key) and approves it (`POST /api/escalations/{id}`); on `approved`
 * the agent retries the identical call, which the PDP now allows, once. Runs offline, against the
 * local reference PDP, which it starts itself:
 *
 *   npm run example:escalation-wait
 *
 * Against replicas behind one Redis (`agent-pep dev-pdp --session-store redis://...`) the reviewer may
 * approve on any replica and the retry be decided on any other.
 * @module
 */
import { createPep, PolicyEnforcementError } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';

const pdp = await startDevPdp({
  policy: {
    agents: ['support-ai'],
    latches: [
      {
        id: 'refund-review',
        stage: 'action',
        tool: 'refund_payment',
        when: { 'args.amount': { gt: 500 } },
        verdict: 'ESCALATE',
        reason: 'refunds over 500 need review',
      },
    ],
  },
  apiKey: 'agent-key-example',
  reviewerApiKey: 'reviewer-key-example',
  log: false,
});

// #region escalation-wait
const pep = createPep({
  pdpUrl: pdp.url,
  agentId: 'support-ai',
  session: 'sess_escalation_wait',
  apiKey: 'agent-key-example',
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
});
const refund = pep.guardTool('refund_payment', async (args) => `refunded ${args.amount}`);
const args = { orderId: 'ord_1842', amount: 900 };

/** Runs the refund; on a hold for review, waits for the reviewer and retries the identical call once. */
async function refundWithReview(): Promise<string> {
  try {
    return await refund(args);
  } catch (err) {
    const escalationId = err instanceof PolicyEnforcementError ? err.decision.escalationId : undefined;
    if (escalationId === undefined) throw err;
    console.log(`held for review: ${escalationId}`);
    const wait = await pep.awaitResolution(escalationId, { timeoutMs: 30_000 });
    console.log(`review: ${wait.status}`);
    // only `approved` retries; denied, expired, pending (timed out) and unavailable (PDP down) do not
    if (!wait.approved) return 'not refunded';
    return refund(args);
  }
}
// #endregion escalation-wait

/** The reviewer, elsewhere: lists what waits and approves the refund it finds. */
async function reviewer(): Promise<void> {
  const auth = { authorization: 'Bearer reviewer-key-example' };
  for (;;) {
    const { escalations } = (await (await fetch(`${pdp.url}/api/escalations`, { headers: auth })).json()) as {
      escalations: { escalationId: string; tool: string; args: { amount: number } }[];
    };
    const held = escalations.find((e) => e.tool === 'refund_payment');
    if (held !== undefined) {
      console.log(`reviewer approves ${held.tool} of ${held.args.amount}`);
      await fetch(`${pdp.url}/api/escalations/${held.escalationId}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ resolution: 'approve', note: 'customer verified' }),
      });
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const [outcome] = await Promise.all([refundWithReview(), reviewer()]);
console.log(outcome);
await pep.close();
await pdp.close();
