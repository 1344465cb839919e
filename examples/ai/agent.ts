/**
 * The Vercel AI SDK adapter (`agent-pep/ai`) end to end, offline: the SDK's own mock model plays a
 * support agent's turns against a local reference PDP that this script starts itself.
 *
 *   npm run example:ai
 *
 * Shows an ALLOW (the tool runs once with a permit the service verifies), a BLOCK the model recovers
 * from, a WARN (the tool runs with the PDP's args), an ESCALATE approved by a reviewer (the SDK's tool
 * approval, then a fresh PDP decision), and the PDP going down mid-run with nothing executed.
 * Exits with status 1 if any outcome is not the expected one.
 * @module
 */
import { createPep, createPermitVerifier, type PolicyDecision, PolicyEnforcementError } from 'agent-pep';
import { guardTools, type PermitContext, pepMiddleware } from 'agent-pep/ai';
import { startDevPdp } from 'agent-pep/dev-pdp';
import { generateText, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import policy from './policy.json' with { type: 'json' };

const pdp = await startDevPdp({ policy, port: 0, log: false });
const service = createPermitVerifier({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: 'agent-pep' });
const ran = { refund: 0, email: 0, deleteAccount: 0 };
let failed = false;

function check(ok: boolean, what: string): void {
  if (!ok) {
    failed = true;
    console.log(`UNEXPECTED ${what}`);
  }
}

const pep = createPep({
  pdpUrl: pdp.url,
  agentId: 'support-ai',
  session: 'sess_ai_example',
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
});

/** The model `wrapLanguageModel` wraps (a provider's model; here the SDK's mock). */
type BaseModel = Parameters<typeof wrapLanguageModel>[0]['model'];

const otherTools = {
  send_email: tool({
    description: 'Send an email',
    inputSchema: z.object({ to: z.string(), body: z.string() }),
    execute: async ({ to }) => {
      ran.email += 1;
      return `sent to ${to}`;
    },
  }),
  delete_account: tool({
    description: 'Delete a customer account',
    inputSchema: z.object({ userId: z.string() }),
    execute: async () => {
      ran.deleteAccount += 1;
      return 'deleted';
    },
  }),
};

// #region ai-adapter
// Each tool body runs only after an ALLOW or WARN whose permit verifies; ESCALATE pauses for approval.
const tools = guardTools(pep, {
  refund_payment: tool({
    description: 'Refund an order',
    inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
    execute: async (args, options) => {
      const { permitId } = options as typeof options & PermitContext;
      await service.verify(permitId ?? '', { tool: 'refund_payment', args }); // as the payments service does
      ran.refund += 1;
      return { refunded: args.amount };
    },
  }),
  ...otherTools,
});
// User text and tool results are checked before the model sees them, its text before you do.
const guarded = (model: BaseModel) => wrapLanguageModel({ model, middleware: pepMiddleware(pep) });
// #endregion ai-adapter

// The mock model: each turn is a function of the prompt it receives.
type Prompt = Array<{ role: string; content: unknown }>;
type Turn = (prompt: Prompt) => { toolCall?: { name: string; input: object }; text?: string };
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};
function scripted(turns: Turn[], beforeTurn?: (n: number) => Promise<void>): MockLanguageModelV3 {
  let n = 0;
  return new MockLanguageModelV3({
    doGenerate: async ({ prompt }) => {
      await beforeTurn?.(n);
      const turn: Turn = turns[n++] ?? (() => ({ text: 'done' }));
      const { toolCall, text } = turn(prompt as Prompt);
      const content = toolCall
        ? [
            {
              type: 'tool-call' as const,
              toolCallId: `call_${n}`,
              toolName: toolCall.name,
              input: JSON.stringify(toolCall.input),
            },
          ]
        : [{ type: 'text' as const, text: text ?? '' }];
      const finishReason = { unified: toolCall ? ('tool-calls' as const) : ('stop' as const), raw: undefined };
      return { content, finishReason, usage, warnings: [] };
    },
  });
}
/** The text of the last tool result in a prompt, as the model reads it. */
function lastToolResult(prompt: Prompt): string {
  const parts = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content as Array<Record<string, unknown>>);
  const output = parts.at(-1)?.output as { value?: unknown; reason?: unknown } | undefined;
  return String(output?.value ?? output?.reason ?? '');
}

const settings = { tools, stopWhen: stepCountIs(5) };

// 1. ALLOW: the refund runs once, with a permit the service verifies; the phone number is redacted.
{
  const model = scripted([
    () => ({ toolCall: { name: 'refund_payment', input: { orderId: 'ord_1842', amount: 129 } } }),
    () => ({ text: 'Refunded 129. Questions? Call 555-123-4567.' }),
  ]);
  const { text } = await generateText({ model: guarded(model), prompt: 'Refund order ord_1842 (129)', ...settings });
  check(ran.refund === 1, 'the refund did not run exactly once');
  console.log(`ALLOW    refund_payment ran ${ran.refund} time(s), permit verified; the model said: ${text}`);
}

// 2. BLOCK: the model reads the denial as the tool's result and recovers.
{
  let seen = '';
  const model = scripted([
    () => ({ toolCall: { name: 'delete_account', input: { userId: 'u_77' } } }),
    (prompt) => {
      seen = lastToolResult(prompt);
      return { text: 'I cannot delete accounts; I have asked support to help instead.' };
    },
  ]);
  const { text } = await generateText({ model: guarded(model), prompt: 'Delete my account', ...settings });
  check(ran.deleteAccount === 0 && seen.includes('denied by policy'), 'the deletion was not denied');
  console.log(`BLOCK    the model read: ${seen}`);
  console.log(`BLOCK    and recovered: ${text}`);
}

// 3. WARN: the mail runs with the PDP's args, not the model's.
{
  let seen = '';
  const model = scripted([
    () => ({ toolCall: { name: 'send_email', input: { to: 'someone@example.net', body: 'your order' } } }),
    (prompt) => {
      seen = lastToolResult(prompt);
      return { text: 'Mail sent.' };
    },
  ]);
  await generateText({ model: guarded(model), prompt: 'Email me the order', ...settings });
  check(ran.email === 1 && seen.includes('support@example.com'), 'the mail did not run with the PDP args');
  console.log(`WARN     send_email ran ${ran.email} time(s), ${seen} (the model asked for someone@example.net)`);
}

// 4. ESCALATE: the SDK pauses for approval; a reviewer approves at the PDP; the resumed call asks the PDP again.
{
  const before = ran.refund;
  const prompt = 'Refund order ord_1900 (900)';
  const first = await generateText({
    model: guarded(
      scripted([() => ({ toolCall: { name: 'refund_payment', input: { orderId: 'ord_1900', amount: 900 } } })]),
    ),
    prompt,
    ...settings,
  });
  const request = first.content.find((p) => p.type === 'tool-approval-request');
  check(request !== undefined && ran.refund === before, 'the refund was not held for approval');
  console.log(`ESCALATE refund_payment of 900 is waiting for approval; ran ${ran.refund - before} time(s)`);
  // The check before asking a person was simulated, and a simulated ESCALATE opens no review at the
  // PDP: the agent's real request for the identical call opens it (and is held).
  const opened = await pep.authorizeAction('refund_payment', { orderId: 'ord_1900', amount: 900 });
  if (request && opened.escalationId) {
    pdp.resolveEscalation(opened.escalationId, 'approve'); // the reviewer, at the PDP
    const messages: ModelMessage[] = [
      { role: 'user', content: prompt },
      ...first.response.messages,
      { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: request.approvalId, approved: true }] },
    ];
    const { text } = await generateText({
      model: guarded(scripted([() => ({ text: 'Refunded 900 after review.' })])),
      messages,
      ...settings,
    });
    check(ran.refund === before + 1, 'the approved refund did not run exactly once');
    console.log(`ESCALATE approved by a reviewer: refund_payment ran ${ran.refund - before} time(s); ${text}`);
  }
}

// 5. The PDP goes down mid-run: nothing runs, the model reads why, and the next model call is stopped.
{
  const before = { ...ran };
  let toolText = '';
  const model = scripted(
    [() => ({ toolCall: { name: 'refund_payment', input: { orderId: 'ord_2001', amount: 50 } } })],
    async (n) => {
      if (n === 0) await pdp.close(); // after the input check passed, before the tool call is decided
    },
  );
  try {
    await generateText({
      model: guarded(model),
      prompt: 'Refund order ord_2001 (50)',
      ...settings,
      onStepFinish: (step) => {
        const error = step.content.find((p) => p.type === 'tool-error')?.error;
        toolText = error instanceof PolicyEnforcementError ? error.toolMessage : String(error);
      },
    });
    check(false, 'the run went on without a PDP');
  } catch (err) {
    const decision: PolicyDecision | undefined = err instanceof PolicyEnforcementError ? err.decision : undefined;
    check(decision?.synthesized?.code === 'pdp_unreachable', 'the run did not stop on the outage');
    console.log(`PDP DOWN the model read: ${toolText}`);
    console.log(`PDP DOWN the run stopped: ${err instanceof PolicyEnforcementError ? err.toolMessage : String(err)}`);
  }
  const executed = ran.refund - before.refund + ran.email - before.email + ran.deleteAccount - before.deleteAccount;
  check(executed === 0, 'a tool ran while the PDP was down');
  console.log(`PDP DOWN tool bodies run while the PDP was down: ${executed}`);
}

await pep.close();
process.exitCode = failed ? 1 : 0;
