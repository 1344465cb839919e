/**
 * agent-pep speaking OpenID AuthZEN 1.0: the same client, the same guards, the PDP asked through
 * `POST /access/v1/evaluation` and `/access/v1/evaluations` (endpoints read from its discovery
 * document). Runs offline, against the local reference PDP over AuthZEN, which it starts itself:
 *
 *   npm run example:authzen
 *
 * Point `pdpUrl` at Cerbos, OpenFGA or Keycloak instead (docs/authzen.md), with `permits: false` for a
 * PDP that mints no permits.
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
      { id: 'no-transfers', stage: 'action', tool: 'transfer_*', verdict: 'BLOCK', reason: 'no money transfers' },
    ],
  },
});

// #region authzen
const pep = createPep({
  pdpUrl: pdp.url, // e.g. Cerbos: 'http://127.0.0.1:3592'
  agentId: 'support-ai',
  session: 'sess_authzen',
  protocol: 'authzen', // POST {pdpUrl}/access/v1/evaluation and /access/v1/evaluations
  discover: true, // endpoints from {pdpUrl}/.well-known/authzen-configuration
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer }, // or `false` for a PDP that mints no permits
});

// One decision per call, in order, each decided on its own, in `evaluations` requests that never hold
// two calls to one tool (a PDP may answer items that look alike as one).
const calls = [
  { tool: 'lookup_order', args: { orderId: 'ord_1842' } },
  { tool: 'refund_payment', args: { orderId: 'ord_1842', amount: 129 } },
  { tool: 'refund_payment', args: { orderId: 'ord_1843', amount: 900 } },
  { tool: 'transfer_funds', args: { to: 'DE00000000000000000000', amount: 5000 } },
];
const decisions = await pep.authorizeActions(calls);
for (const [i, d] of decisions.entries()) console.log([calls[i]?.tool, d.verdict, d.reason].filter(Boolean).join(' '));

// The guard helpers work the same on either protocol.
const refund = pep.guardTool('refund_payment', async (args) => ({ refunded: args.amount }));
console.log(await refund({ orderId: 'ord_1842', amount: 129 }));
// #endregion authzen
try {
  await refund({ orderId: 'ord_1843', amount: 900 });
} catch (err) {
  if (!(err instanceof PolicyEnforcementError)) throw err;
  console.log(err.toolMessage);
} finally {
  await pep.close();
  await pdp.close();
}
