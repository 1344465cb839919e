/**
 * Quick start: guard one tool against a PDP. Start the local reference PDP first, in another terminal:
 *
 *   npx agent-pep dev-pdp --policy examples/quickstart/policy.json
 *   npm run example:quickstart                  (or PDP_URL=http://127.0.0.1:PORT node build/examples/quickstart/agent.js)
 *
 * The refund of 129 runs; the refund of 900 is held for review, and the tool body never runs.
 * @module
 */
// #region quickstart
import { createPep, PolicyEnforcementError } from 'agent-pep';

// The base URL without its trailing `/`, so the JWKS URL and the issuer match the PDP's (one rule: docs/api.md).
const pdpUrl = (process.env.PDP_URL ?? 'http://127.0.0.1:8787').replace(/\/+$/, '');
const pep = createPep({
  pdpUrl,
  agentId: 'support-ai',
  session: 'sess_quickstart',
  permits: { keys: `${pdpUrl}/.well-known/jwks.json`, issuer: pdpUrl },
});

// The tool body runs only after the PDP allowed this exact call and its permit verified.
const refund = pep.guardTool('refund_payment', async (args) => ({ refunded: args.amount }));

for (const amount of [129, 900]) {
  try {
    console.log(await refund({ orderId: 'ord_1842', amount }));
  } catch (err) {
    // A BLOCK, an outage or a hold for review: show the model this text instead of a result,
    // and yourself the cause (err.message: e.g. `HTTP 401 (unauthorized) at <url>`, a permit claim).
    if (err instanceof PolicyEnforcementError) {
      console.log(err.toolMessage);
      console.error(err.message);
    } else throw err;
  }
}
await pep.close();
// #endregion quickstart
