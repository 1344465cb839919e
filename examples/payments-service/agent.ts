/**
 * The agent side of the payments-service example: a tool dispatcher whose tools run only through
 * `pep.guardTool`, presenting the permit to the service, which verifies it before it acts.
 *
 *   npm run example:payments
 *
 * Starts a local reference PDP (agent-pep/dev-pdp) and the payments service on free ports, then
 * plays a few tool calls a model might make, and a few attacks on the service that bypass the PEP.
 * Exits with status 1 if any outcome is not the expected one.
 * @module
 */
import { createPep, type GuardedTool, normalizeToolName, PolicyEnforcementError } from 'agent-pep';
import { startDevPdp } from 'agent-pep/dev-pdp';
import policy from './policy.json' with { type: 'json' };
import { startPaymentsService } from './server.js';

const AUDIENCE = 'payments-service';

const pdp = await startDevPdp({ policy, audience: AUDIENCE });
const service = await startPaymentsService({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: AUDIENCE });
const pep = createPep({
  pdpUrl: pdp.url,
  agentId: 'support-ai',
  session: 'sess_demo',
  permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
});

/** Calls the service with the permit the PEP verified; the service verifies it again and consumes it. */
async function callService(
  path: string,
  args: Record<string, unknown>,
  permitId: string | undefined,
  signal: AbortSignal | undefined,
): Promise<Record<string, unknown>> {
  const res = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Permit ${permitId}` },
    body: JSON.stringify(args),
    signal: signal ?? null,
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`payments-service refused (${res.status} ${body.error})`);
  return body;
}

let lastPermit: string | undefined; // kept only so that the demo can attempt a replay below

/** The agent's tools, by normalized name. Nothing runs without an ALLOW/WARN and a valid permit. */
const tools: Record<string, GuardedTool<Record<string, unknown>>> = {
  refund_payment: pep.guardTool('refund_payment', async (args, { permitId, signal }) => {
    lastPermit = permitId;
    return callService('/refund', args, permitId, signal);
  }),
  bank_transfer: pep.guardTool('bank_transfer', (args, { permitId, signal }) =>
    callService('/tools/bank_transfer', args, permitId, signal),
  ),
};

/** What the model sees for a tool call: the result, or the policy's refusal as text. */
async function dispatch(name: string, args: Record<string, unknown>): Promise<string> {
  let tool: GuardedTool<Record<string, unknown>> | undefined;
  try {
    const normalized = normalizeToolName(name);
    tool = Object.hasOwn(tools, normalized) ? tools[normalized] : undefined;
  } catch {
    tool = undefined;
  }
  if (!tool) return `ERROR: unknown tool '${name}'`;
  try {
    return JSON.stringify(await tool(args));
  } catch (e) {
    if (e instanceof PolicyEnforcementError) return e.toolMessage;
    return `ERROR: ${e instanceof Error ? e.message : String(e)}`;
  }
}

const outcomes: boolean[] = [];
function expectThat(what: string, ok: boolean, detail?: string): void {
  outcomes.push(ok);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail ? `\n       ${detail}` : ''}`);
}

async function raw(
  path: string,
  args: Record<string, unknown>,
  authorization?: string,
): Promise<{ status: number; error: unknown }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (authorization) headers.authorization = authorization;
  const res = await fetch(`${service.url}${path}`, { method: 'POST', headers, body: JSON.stringify(args) });
  return { status: res.status, error: ((await res.json()) as { error?: unknown }).error };
}

try {
  console.log(`PDP ${pdp.url}, payments-service ${service.url}\n`);

  // 1. The model asks for a small refund: ALLOW, permit verified by the PEP, presented, consumed.
  let out = await dispatch('refundPayment', { orderId: 'ord_1842', amount: 129.0 });
  expectThat('a refund of 129 runs once', out.includes('"status":"refunded"') && service.ledger.length === 1, out);

  // 2. A large refund is held for review: nothing reaches the service.
  out = await dispatch('refund_payment', { orderId: 'ord_1843', amount: 900 });
  expectThat(
    'a refund of 900 is escalated, not executed',
    out.startsWith('ERROR:') && service.ledger.length === 1,
    out,
  );

  // 3. A blocked tool: the PDP says BLOCK, the PEP throws, the model sees the reason.
  out = await dispatch('bank_transfer', { from: 'acct_1', to: 'acct_2', amount: 10 });
  expectThat('a bank transfer is blocked', out.startsWith("ERROR: Tool 'bank_transfer' denied by policy"), out);

  // 4. Bypassing the PEP: calling the service directly without a permit.
  let r = await raw('/refund', { orderId: 'ord_9', amount: 50 });
  expectThat('no permit: 401 permit_missing', r.status === 401 && r.error === 'permit_missing');

  // 5. Replaying the permit of step 1.
  r = await raw('/refund', { orderId: 'ord_1842', amount: 129 }, `Permit ${lastPermit}`);
  expectThat('the same permit again: 403 permit_replayed', r.status === 403 && r.error === 'permit_replayed');

  // 6. Changing the args after the PDP saw them: a permit for 10, a request for 499.
  const d = await pep.authorizeAction('refund_payment', { orderId: 'ord_7', amount: 10 });
  r = await raw('/refund', { orderId: 'ord_7', amount: 499 }, `Permit ${d.permitId}`);
  expectThat(
    'args changed after the decision: 403 permit_args_mismatch',
    r.status === 403 && r.error === 'permit_args_mismatch',
  );
  // the refused permit was not consumed: the honest request still runs
  r = await raw('/refund', { orderId: 'ord_7', amount: 10 }, `Permit ${d.permitId}`);
  expectThat('the same permit with its own args still works', r.status === 200 && service.ledger.length === 2);

  // 7. A permit for one tool presented to another.
  const d2 = await pep.authorizeAction('refund_payment', { orderId: 'ord_8', amount: 5 });
  r = await raw('/tools/cancel_order', { orderId: 'ord_8', amount: 5 }, `Permit ${d2.permitId}`);
  expectThat(
    'a refund permit used to cancel an order: 403 permit_tool_mismatch',
    r.status === 403 && r.error === 'permit_tool_mismatch',
  );

  console.log(`\nledger: ${JSON.stringify(service.ledger.map((e) => ({ tool: e.tool, args: e.args })))}`);
} finally {
  await pep.close();
  await service.close();
  await pdp.close();
}

if (outcomes.includes(false)) process.exitCode = 1;
