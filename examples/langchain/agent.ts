/**
 * A LangChain `createAgent` agent with agent-pep's middleware. Runs offline: a scripted fake model
 * (LangChain's own `fakeModel()`) plays the LLM, against a local reference PDP the example starts:
 *
 *   npm run example:langchain
 *
 * It shows an ALLOW, a WARN (the lookup runs with capped args), a BLOCK the model recovers from, an
 * ESCALATE that interrupts the graph until a reviewer approves it at the PDP, and the PDP going down
 * mid-run with nothing executed.
 * @module
 */

import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { Command, MemorySaver } from '@langchain/langgraph';
import { createPep, type Pep } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';
import { type PepInterruptValue, type PepToolCall, pepMiddleware } from 'agent-pep/langchain';
import { createAgent, fakeModel, tool } from 'langchain';
import { z } from 'zod';

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
    {
      id: 'cap-lookups',
      stage: 'action',
      tool: 'lookup_orders',
      when: { 'args.limit': { gt: 10 } },
      setArgs: { 'args.limit': 10 },
      verdict: 'WARN',
      reason: 'lookups are capped at 10',
    },
  ],
};

const pdp = await startDevPdp({ policy, log: false });
const pep: Pep = createPep({
  pdpUrl: pdp.url,
  agentId: 'support-ai',
  session: 'sess_langchain',
  timeoutMs: 2000,
  retries: 0,
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
});

/** The side effects that ran, in order. */
const ledger: string[] = [];

const lookupOrders = tool(
  async ({ customer, limit }) => {
    ledger.push('lookup_orders');
    console.log(`ran      lookup_orders ${JSON.stringify({ customer, limit })}`);
    return `3 orders of ${customer} (limit ${limit})`;
  },
  {
    name: 'lookup_orders',
    description: "Look up a customer's orders",
    schema: z.object({ customer: z.string(), limit: z.number() }),
  },
);
const refundPayment = tool(
  async ({ orderId, amount }, config: { toolCall?: PepToolCall }) => {
    // The verified permit, for the payments service to check before it pays (see examples/service.ts).
    const permit = config.toolCall?.['agent-pep/permit'];
    ledger.push('refund_payment');
    console.log(`ran      refund_payment ${orderId} ${amount} (permit ${permit ? 'attached' : 'missing'})`);
    return `refunded ${amount} on ${orderId}`;
  },
  {
    name: 'refund_payment',
    description: 'Refund an order',
    schema: z.object({ orderId: z.string(), amount: z.number() }),
  },
);
const bankTransfer = tool(
  async () => {
    ledger.push('bank_transfer');
    return 'sent';
  },
  { name: 'bank_transfer', description: 'Send money', schema: z.object({ to: z.string(), amount: z.number() }) },
);

/** The last tool result the model was shown (what it reads on its next call). */
function lastToolResult(messages: { content: unknown }[]): string {
  const found = [...messages].reverse().find((m) => ToolMessage.isInstance(m));
  return String(found?.content);
}

// The scripted model: each entry answers one model call, in order, across the three runs below.
const model = fakeModel()
  // run 1: a capped lookup (WARN), a transfer (BLOCK), then a refund (ALLOW)
  .respondWithTools([{ name: 'lookup_orders', args: { customer: 'c_42', limit: 500 }, id: 'call_1' }])
  .respond((messages) => {
    console.log(`WARN     the model asked for 500; the model read: ${lastToolResult(messages)}`);
    return new AIMessage({
      content: '',
      tool_calls: [{ name: 'bank_transfer', args: { to: 'acct_9', amount: 129 }, id: 'call_2' }],
    });
  })
  .respond((messages) => {
    console.log(`BLOCK    the model read: ${lastToolResult(messages)}`);
    return new AIMessage({
      content: '',
      tool_calls: [{ name: 'refund_payment', args: { orderId: 'ord_1842', amount: 129 }, id: 'call_3' }],
    });
  })
  .respond(new AIMessage('I refunded 129 on ord_1842; I cannot send money transfers.'))
  // run 2: a refund of 900 (ESCALATE)
  .respondWithTools([{ name: 'refund_payment', args: { orderId: 'ord_1999', amount: 900 }, id: 'call_4' }])
  .respond(new AIMessage('The refund of 900 on ord_1999 is done.'))
  // run 3: the PDP goes down while the model proposes a refund
  .respond(() => {
    void pdp.close();
    return new AIMessage({
      content: '',
      tool_calls: [{ name: 'refund_payment', args: { orderId: 'ord_2001', amount: 50 }, id: 'call_5' }],
    });
  })
  .respond((messages) => {
    console.log(`PDP down the model read: ${lastToolResult(messages)}`);
    return new AIMessage('The refund could not be made right now.');
  });

// #region langchain-adapter
// Every tool call, model call and final answer goes to the PDP; an ESCALATE interrupts the graph.
const agent = createAgent({
  model,
  tools: [lookupOrders, refundPayment, bankTransfer],
  middleware: [pepMiddleware(pep)],
  checkpointer: new MemorySaver(), // interrupts need a checkpointer
});
// A held call resumes in the humanInTheLoopMiddleware form. The approval alone is not enough:
// the adapter asks the PDP again and runs the tool only on an ALLOW whose permit verifies.
const approve = new Command({ resume: { decisions: [{ type: 'approve' }] } });
// #endregion langchain-adapter

/** One run on a thread (the thread id is the PEP session); prints the answer or the interrupt. */
async function run(threadId: string, input: { messages: HumanMessage[] } | Command) {
  const result = await agent.invoke(input, { configurable: { thread_id: threadId } });
  const interrupts = (result as { __interrupt__?: { value: PepInterruptValue }[] }).__interrupt__ ?? [];
  for (const { value } of interrupts) console.log(`ESCALATE ${value.actionRequests[0]?.description}`);
  if (interrupts.length === 0) console.log(`answer   ${String(result.messages.at(-1)?.content)}`);
  return interrupts;
}

// 1. WARN (capped lookup), BLOCK (transfer; the model recovers), ALLOW (refund of 129)
await run('thread_1', { messages: [new HumanMessage('Check c_42, then pay back 129 on ord_1842')] });

// 2. ESCALATE: the graph waits; resuming approved before the reviewer decided would run nothing
const [held] = await run('thread_2', { messages: [new HumanMessage('Refund 900 on ord_1999')] });
if (held?.value.escalationId === undefined) throw new Error('expected an escalation');
pdp.resolveEscalation(held.value.escalationId, 'approve'); // the reviewer, at the PDP
console.log('review   a reviewer approved the escalation at the PDP');
await run('thread_2', approve);

// 3. The PDP goes down mid-run: nothing runs, and the model is told why
const before = ledger.length;
await run('thread_3', { messages: [new HumanMessage('Refund 50 on ord_2001')] });
console.log(`PDP down ${ledger.length - before} side effects ran in that run`);

console.log(`side effects that ran: ${ledger.length} (${ledger.join(', ')})`);
await pep.close();
await pdp.close();
