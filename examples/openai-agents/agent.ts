/**
 * The OpenAI Agents SDK with agent-pep: a support agent whose tools, input, tool outputs and final
 * output all go through the PDP. Runs offline: the model is the SDK's own `ScriptedModel`, and the
 * example starts a local reference PDP (agent-pep/dev-pdp) on a free port.
 *
 *   npm run example:openai-agents
 *
 * Five scenes: an ALLOW (the refund runs once, its permit verified by the "service"), a BLOCK the
 * model recovers from, a WARN (the PDP adds an audit copy to an email), an ESCALATE approved by a
 * reviewer (the run resumes through `RunState`, and the PDP is asked again), and the PDP going down
 * mid-run (nothing runs). Exits with status 1 if any outcome is not the expected one.
 * @module
 */
import { Agent, OutputGuardrailTripwireTriggered, Runner, RunState, setTracingDisabled, tool } from '@openai/agents';
import { assistantMessage, functionCall, modelResponder, ScriptedModel } from '@openai/agents/testing';
import { createPep, createPermitVerifier, type DecisionEvent } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';
import {
  guardTools,
  pepInputGuardrail,
  pepModelInputFilter,
  pepOutputGuardrail,
  pepToolContext,
} from 'agent-pep/openai-agents';
import { z } from 'zod';
import policy from './policy.json' with { type: 'json' };

setTracingDisabled(true); // offline: no trace export

const pdp = await startDevPdp({ policy, log: false });
const escalations: string[] = [];
const pep = createPep({
  pdpUrl: pdp.url,
  agentId: 'support-ai',
  session: 'sess_openai_agents',
  retries: 0,
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
  onDecision: (e: DecisionEvent) => {
    if (e.decision.escalationId !== undefined) escalations.push(e.decision.escalationId);
  },
});
// The side-effecting service's own check of the permit (one use each).
const service = createPermitVerifier({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: pdp.audience });

let failed = false;
function expectThat(ok: boolean, what: string): void {
  if (!ok) {
    failed = true;
    console.log(`UNEXPECTED: ${what}`);
  }
}

/** Every tool body that ran, in order. */
const ran: string[] = [];

const refundPayment = tool({
  name: 'refund_payment',
  description: 'Refund an order',
  parameters: z.object({ orderId: z.string(), amount: z.number() }),
  execute: async (args, _ctx, details) => {
    await service.verify(pepToolContext(details)?.permitId ?? '', { tool: 'refund_payment', args });
    ran.push(`refund_payment ${JSON.stringify(args)}`);
    return `refunded ${args.amount} on ${args.orderId}`;
  },
});
const deleteAccount = tool({
  name: 'delete_account',
  description: 'Delete a customer account',
  parameters: z.object({ customerId: z.string() }),
  execute: async (args) => {
    ran.push(`delete_account ${JSON.stringify(args)}`);
    return 'deleted';
  },
});
const sendEmail = tool({
  name: 'send_email',
  description: 'Send an email to a customer',
  parameters: z.object({ to: z.string(), body: z.string(), bcc: z.string().optional() }),
  execute: async (args) => {
    ran.push(`send_email ${JSON.stringify(args)}`);
    return `sent to ${args.to}`;
  },
});

/** The text the model was given as the result of `callId` (what it reacts to). */
function resultSeen(input: unknown, callId: string): string {
  for (const item of Array.isArray(input) ? input : []) {
    if (item?.type === 'function_call_result' && item.callId === callId) {
      return typeof item.output === 'string' ? item.output : String(item.output?.text);
    }
  }
  return '(none)';
}

// The model: one scripted step per model call, across the five scenes.
const model = new ScriptedModel([
  // 1. ALLOW
  [functionCall('refund_payment', { orderId: 'ord_1842', amount: 129 }, { callId: 'call_1' })],
  [assistantMessage('I refunded 129 on ord_1842.')],
  // 2. BLOCK, and the model recovers: it reads the denial and offers something else
  [functionCall('delete_account', { customerId: 'cus_7' }, { callId: 'call_2' })],
  modelResponder(({ request }) => {
    const seen = resultSeen(request.input, 'call_2');
    return [assistantMessage(seen.includes('denied by policy') ? 'I cannot delete accounts; support can.' : seen)];
  }),
  // 3. WARN
  [functionCall('send_email', { to: 'ada@example.com', body: 'Your refund is on its way.' }, { callId: 'call_3' })],
  [assistantMessage('I emailed Ada.')],
  // 4. ESCALATE (the resume takes the second step)
  [functionCall('refund_payment', { orderId: 'ord_1900', amount: 900 }, { callId: 'call_4' })],
  [assistantMessage('I refunded 900 on ord_1900 after review.')],
  // 5. The PDP goes down while the model is thinking
  modelResponder(async () => {
    await pdp.close();
    return [functionCall('refund_payment', { orderId: 'ord_7', amount: 50 }, { callId: 'call_5' })];
  }),
  [assistantMessage('I could not refund ord_7 right now.')],
]);

// #region openai-agents-adapter
// Tools run only after an ALLOW whose permit verifies; an ESCALATE becomes an approval interruption.
const agent = new Agent({
  name: 'support',
  instructions: 'Help customers with their orders.',
  model,
  tools: guardTools(pep, [refundPayment, deleteAccount, sendEmail]),
  inputGuardrails: [pepInputGuardrail(pep)], // a BLOCK stops the run before the model is called
  outputGuardrails: [pepOutputGuardrail(pep)], // the final output is checked before it is returned
});
// Tool outputs are checked at context_egress before the model sees them.
const runner = new Runner({ callModelInputFilter: pepModelInputFilter(pep) });
// #endregion openai-agents-adapter

// 1. ALLOW: the body runs once, and the service accepts its permit.
let result = await runner.run(agent, 'Please refund order ord_1842.');
console.log(`ALLOW     ran: ${ran.join('; ')}`);
console.log(`          model: ${result.finalOutput}`);
expectThat(ran.length === 1, 'the allowed refund ran once');

// 2. BLOCK: the body does not run; the model sees the denial and answers around it.
result = await runner.run(agent, 'Delete my account.');
console.log(`BLOCK     the model saw: ${resultSeen(model.calls[3]?.request.input, 'call_2')}`);
console.log(`          model: ${result.finalOutput}`);
expectThat(ran.length === 1, 'the blocked delete did not run');

// 3. WARN: the body runs with the PDP's args (an audit copy added).
result = await runner.run(agent, 'Email Ada that her refund is coming.');
console.log(`WARN      ran: ${ran.at(-1)}`);
expectThat(ran.at(-1)?.includes('"bcc":"audit@example.com"') === true, 'the email ran with the audit copy');

// 4. ESCALATE: the run stops with an interruption; a reviewer approves in the PDP, the host approves
// in the SDK, and the resumed run asks the PDP again before the refund runs.
result = await runner.run(agent, 'Refund 900 on ord_1900.');
console.log(
  `ESCALATE  interruptions: ${result.interruptions.map((i) => i.name).join(', ')}; ran so far: ${ran.length}`,
);
// needsApproval's check was simulated, and a simulated ESCALATE opens no review at the PDP: the
// agent's real request for the identical call opens it (and is held).
await pep.authorizeAction('refund_payment', { orderId: 'ord_1900', amount: 900 });
const escalationId = escalations.at(-1);
if (escalationId !== undefined) pdp.resolveEscalation(escalationId, 'approve'); // the reviewer
const state = await RunState.fromString(agent, result.state.toString());
for (const item of state.getInterruptions()) state.approve(item); // the host
const resumed = await runner.run(agent, state);
console.log(`          approved and resumed, ran: ${ran.at(-1)}`);
console.log(`          model: ${resumed.finalOutput}`);
expectThat(ran.length === 3 && ran.at(-1)?.includes('ord_1900') === true, 'the approved refund ran once');

// 5. The PDP goes down mid-run: nothing runs, nothing unchecked reaches the model or the user.
try {
  await runner.run(agent, 'Refund 50 on ord_7.');
  expectThat(false, 'the run with the PDP down returned an unchecked output');
} catch (err) {
  if (!(err instanceof OutputGuardrailTripwireTriggered)) throw err;
  console.log(`PDP DOWN  the model saw: ${resultSeen(model.lastCall?.request.input, 'call_5')}`);
  console.log(`          output withheld: ${err.result.output.outputInfo.message}`);
}
expectThat(ran.length === 3, 'nothing ran while the PDP was down');
console.log(`tool bodies run: ${ran.length}`);

await pep.close();
await pdp.close();
process.exitCode = failed ? 1 : 0;
