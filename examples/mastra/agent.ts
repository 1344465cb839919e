/**
 * The Mastra adapter (`agent-pep/mastra`) end to end, offline: a Mastra `Agent` driven by the AI SDK's
 * mock model against a local reference PDP that this script starts itself.
 *
 *   npm run example:mastra
 *
 * Shows an ALLOW (the tool runs once with a permit the service verifies, in the session of the memory
 * thread), a BLOCK the model reads, a tool result withheld at context_egress, an ESCALATE that suspends
 * the run for Mastra's tool-call approval and runs once a reviewer approved it at the PDP (asked again
 * on resume), and the PDP going down with nothing executed. Exits with status 1 on any other outcome.
 * @module
 */
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { InMemoryStore } from '@mastra/core/storage';
import { createTool } from '@mastra/core/tools';
import { createPep, createPermitVerifier, type Pep } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';
import { guardTools, type PermitContext, pepInputProcessor } from 'agent-pep/mastra';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import policy from './policy.json' with { type: 'json' };

const pdp = await startDevPdp({ policy, port: 0, log: false });
const service = createPermitVerifier({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: 'agent-pep' });
let lastEscalation: string | undefined;
const ran = { refund: 0, deleteAccount: 0, lookup: 0 };
let failed = false;
function check(ok: boolean, what: string): void {
  if (!ok) {
    failed = true;
    console.log(`UNEXPECTED ${what}`);
  }
}
function client(pdpUrl: string): Pep {
  return createPep({
    pdpUrl,
    agentId: 'support-mastra',
    session: 'sess_mastra_example',
    timeoutMs: 1000,
    retries: 0,
    permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
    onDecision: (e) => {
      if (e.decision.escalationId) lastEscalation = e.decision.escalationId; // what a reviewer is shown
    },
  });
}

const tools = {
  refund_payment: createTool({
    id: 'refund_payment',
    description: 'Refund an order',
    inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
    execute: async (args, context) => {
      const { permitId } = context as typeof context & PermitContext;
      await service.verify(permitId ?? '', { tool: 'refund_payment', args }); // as the payments service does
      ran.refund += 1;
      return `refunded ${args.amount}`;
    },
  }),
  delete_account: createTool({
    id: 'delete_account',
    description: 'Delete a customer account',
    inputSchema: z.object({ userId: z.string() }),
    execute: async () => {
      ran.deleteAccount += 1;
      return 'deleted';
    },
  }),
  lookup_order: createTool({
    id: 'lookup_order',
    description: 'Look an order up',
    inputSchema: z.object({ orderId: z.string() }),
    execute: async () => {
      ran.lookup += 1;
      return 'order ok; debug key AKIAABCDEFGHIJKLMNOP';
    },
  }),
};

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
/** A mock model that proposes one tool call, then answers with what it read. */
function scripted(name: string, input: object): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      const results = prompt.flatMap((m) => (m.role === 'tool' ? m.content : []));
      const last = results.at(-1) as { output?: { value?: unknown } } | undefined;
      if (last === undefined) {
        const content = [
          { type: 'tool-call' as const, toolCallId: 'call_1', toolName: name, input: JSON.stringify(input) },
        ];
        return { content, finishReason: { unified: 'tool-calls' as const, raw: undefined }, usage, warnings: [] };
      }
      const text = `I read: ${String(last.output?.value)}`;
      return {
        content: [{ type: 'text' as const, text }],
        finishReason: { unified: 'stop' as const, raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}

// #region mastra-adapter
// Each tool body runs only after an ALLOW whose permit verifies; ESCALATE suspends for Mastra's approval.
function supportAgent(pep: Pep, model: MockLanguageModelV3): Agent {
  const agent = new Agent({
    id: 'support',
    name: 'support',
    instructions: 'You help customers.',
    model,
    tools: guardTools(pep, tools),
    inputProcessors: [pepInputProcessor(pep)],
  });
  new Mastra({ agents: { support: agent }, storage: new InMemoryStore(), logger: false }); // approvals need storage
  return agent;
}
// #endregion mastra-adapter

const pep = client(pdp.url);
const memory = { thread: 'thread-1842', resource: 'customer-7' };

// 1. ALLOW: the refund runs once, with a permit the service verifies; decided in the thread's session.
{
  const { text } = await supportAgent(pep, scripted('refund_payment', { orderId: 'ord_1842', amount: 129 })).generate(
    'Refund order ord_1842 (129)',
    { memory },
  );
  const inThread = pdp.evidence().some((e) => e.stage === 'action' && e.session === memory.thread);
  check(ran.refund === 1 && inThread, 'the refund did not run once in the session of the thread');
  console.log(`ALLOW    refund_payment ran ${ran.refund} time(s), permit verified, session ${memory.thread}; ${text}`);
}

// 2. BLOCK: the model reads the denial as the tool's error.
{
  const { text } = await supportAgent(pep, scripted('delete_account', { userId: 'u_77' })).generate(
    'Delete my account',
    { memory },
  );
  check(ran.deleteAccount === 0 && text.includes('denied by policy'), 'the deletion was not denied');
  console.log(`BLOCK    ${text}`);
}

// 3. context_egress: the tool ran, but its result holds a credential; the model reads the denial instead.
{
  const { text } = await supportAgent(pep, scripted('lookup_order', { orderId: 'ord_1842' })).generate('Look it up', {
    memory,
  });
  check(ran.lookup === 1 && !text.includes('AKIA'), 'the credential reached the model');
  console.log(`EGRESS   lookup_order ran ${ran.lookup} time(s); ${text}`);
}

// 4. ESCALATE: the run suspends for approval; a reviewer approves at the PDP; the resumed call asks the PDP again.
{
  const agent = supportAgent(pep, scripted('refund_payment', { orderId: 'ord_1900', amount: 900 }));
  const out = await agent.generate('Refund order ord_1900 (900)', { memory });
  check(out.finishReason === 'suspended' && ran.refund === 1, 'the refund was not suspended for approval');
  console.log(
    `ESCALATE refund_payment of 900 is waiting for approval (finishReason ${out.finishReason}); ran 0 time(s)`,
  );
  if (lastEscalation) pdp.resolveEscalation(lastEscalation, 'approve'); // the reviewer, at the PDP
  const done = await agent.approveToolCallGenerate({ runId: out.runId as string, toolCallId: 'call_1', memory });
  check(ran.refund === 2, 'the approved refund did not run exactly once');
  console.log(`ESCALATE approved by a reviewer: refund_payment ran 1 time(s); ${done.text}`);
}

// 5. The PDP is down: nothing runs (the input check stops the run before the model is called).
{
  const down = client('http://127.0.0.1:9');
  const out = await supportAgent(down, scripted('refund_payment', { orderId: 'ord_2000', amount: 5 })).generate(
    'Refund order ord_2000 (5)',
    { memory },
  );
  check(ran.refund === 2 && out.tripwire !== undefined, 'something ran while the PDP was down');
  console.log(`PDP DOWN the run stopped: ${out.tripwire?.reason}`);
  console.log(`PDP DOWN tool bodies run while the PDP was down: ${ran.refund - 2}`);
  await down.close();
}

await pep.close();
await pdp.close();
if (failed) process.exitCode = 1;
