/**
 * `npm run demo -- --review`: after the replay, the calls the policy held for review (ESCALATE) are
 * proposed once more and wait in the dev PDP's reviewer console (docs/dev-pdp.md, "The reviewer
 * console"). The PDP stays up; a person approves or denies each held call in the browser, and the demo
 * then sends the identical call again: an approved one runs exactly once, a denied one is blocked.
 * Ctrl-C stops it.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { createPep } from 'agent-pep';
import { type DevPdp, startDevPdp } from 'agent-pep/dev-pdp';
import { createDispatcher } from './dispatcher.js';
import type { ToolCall } from './failclosed.js';
import { startToolService } from './tool-service.js';

/** What the review step needs from the replay. */
export interface HeldForReview {
  /** The demo's policy. */
  policy: unknown;
  agentId: string;
  /** The tool service's permit audience. */
  audience: string;
  /** The action calls the replay saw escalated (at most a few are held again). */
  calls: ToolCall[];
}

/** How many held calls are proposed again for review (the first ones the replay held). */
export const MAX_HELD = 5;

/** The console's address line, printed by the demo when it holds calls. */
export function consoleLine(pdp: DevPdp, reviewerKey: string): string {
  return `reviewer console: ${pdp.url}/console  (sign in with the reviewer key ${reviewerKey})`;
}

/**
 * Starts a dev PDP with its reviewer console (a fresh reviewer key) and a tool service, holds the calls
 * for review and runs each approved one once; resolves when every held call is resolved (or `signal`
 * aborts), and stops both.
 */
export async function holdForReview(
  held: HeldForReview,
  out: { write(text: string): unknown },
  signal?: AbortSignal,
): Promise<void> {
  const reviewerKey = randomBytes(12).toString('base64url');
  const pdp = await startDevPdp({
    policy: held.policy,
    audience: held.audience,
    reviewerApiKey: reviewerKey,
    console: true,
  });
  const service = await startToolService({ keys: pdp.jwksUrl, issuer: pdp.issuer, audience: held.audience });
  const pep = createPep({
    pdpUrl: pdp.url,
    agentId: held.agentId,
    session: 'demo-review',
    permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
  });
  try {
    await waitForReviews({ ...held, pdp, reviewerKey }, createDispatcher(pep, service.url), out, signal);
  } finally {
    await pep.close();
    await service.close();
    await pdp.close();
  }
}

async function waitForReviews(
  held: HeldForReview & { pdp: DevPdp; reviewerKey: string },
  dispatcher: ReturnType<typeof createDispatcher>,
  out: { write(text: string): unknown },
  signal: AbortSignal | undefined,
): Promise<void> {
  const waiting = new Map<string, ToolCall>();
  for (const call of held.calls.slice(0, MAX_HELD)) {
    const outcome = await dispatcher.dispatch(call.tool, call.args);
    const id = outcome.decision.escalationId;
    if (outcome.decision.verdict === 'ESCALATE' && id !== undefined) waiting.set(id, call);
  }
  if (waiting.size === 0) {
    out.write('no calls are held for review.\n');
    return;
  }
  out.write(
    `\n${waiting.size} of the ${held.calls.length} tool calls the replay held are held for review again.\n${consoleLine(held.pdp, held.reviewerKey)}\n`,
  );
  for (const [id, call] of waiting) out.write(`  ${id}  ${call.tool}\n`);
  out.write('Approve or deny them in the console; each approved call then runs once. Ctrl-C stops.\n');
  while (waiting.size > 0 && signal?.aborted !== true) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const record of held.pdp.evidence()) {
      const call = record.stage === 'review' ? waiting.get(record.escalationId ?? '') : undefined;
      if (call === undefined || record.escalationId === undefined) continue;
      waiting.delete(record.escalationId);
      // the identical call: an approval lets it run once, a denial blocks it
      const outcome = await dispatcher.dispatch(call.tool, call.args);
      out.write(
        `${record.escalationId} ${record.outcome}: ${call.tool} ${outcome.executed ? 'ran once' : `did not run (${outcome.decision.verdict})`}\n`,
      );
    }
  }
}
