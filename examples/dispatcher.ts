/**
 * A tool dispatcher wrapped with agent-pep: every tool runs only after the PDP allows it and the
 * permit verifies. Runs offline, against a local reference PDP it starts itself:
 *
 *   npm run example:dispatcher
 *
 * @module
 */
import { createPep, type GuardedTool, PolicyEnforcementError } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';

const policy = {
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
    { id: 'no-transfers', stage: 'action', tool: 'bank_*', verdict: 'BLOCK', reason: 'no money transfers' },
  ],
};

const pdp = await startDevPdp({ policy });
const pep = createPep({
  pdpUrl: pdp.url,
  agentId: 'support-ai',
  session: 'sess_dispatcher',
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
});

/** The side effects that ran, in order. */
const ledger: { tool: string; args: Record<string, unknown> }[] = [];

/** The agent's tools. Each side effect is wrapped; the permit is what a real service would demand. */
const tools: Record<string, GuardedTool<unknown>> = {
  lookup_order: pep.guardTool('lookup_order', async ({ orderId }) => ({ orderId, status: 'shipped' })),
  refund_payment: pep.guardTool('refund_payment', async (args, { permitId }) => {
    ledger.push({ tool: 'refund_payment', args });
    return { refunded: args.amount, permit: `${permitId?.slice(0, 12)}...` };
  }),
  bank_transfer_funds: pep.guardTool('bank_transfer_funds', async (args) => {
    ledger.push({ tool: 'bank_transfer_funds', args });
    return { transferred: true };
  }),
};

/** What the agent loop calls with the model's proposed tool call; returns what the model sees. */
async function dispatch(name: string, args: Record<string, unknown>): Promise<string> {
  const tool = Object.hasOwn(tools, name) ? tools[name] : undefined;
  if (!tool) return `ERROR: unknown tool '${name}'`;
  try {
    return JSON.stringify(await tool(args));
  } catch (err) {
    if (err instanceof PolicyEnforcementError) return err.toolMessage;
    throw err;
  }
}

const proposed: [string, Record<string, unknown>][] = [
  ['lookup_order', { orderId: 'ord_1842' }],
  ['refund_payment', { orderId: 'ord_1842', amount: 129 }],
  ['refund_payment', { orderId: 'ord_1843', amount: 900 }],
  ['bank_transfer_funds', { to: 'DE00000000000000000000', amount: 5000 }],
];
try {
  for (const [name, args] of proposed) {
    console.log(`${name.padEnd(20)} ${JSON.stringify(args).padEnd(50)} -> ${await dispatch(name, args)}`);
  }
  console.log(`\nside effects that ran: ${ledger.length} (${ledger.map((e) => e.tool).join(', ')})`);
} finally {
  await pep.close();
  await pdp.close();
}
