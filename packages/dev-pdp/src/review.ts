/**
 * The review side of the dev PDP: the escalation book with its two TTLs, a chained evidence record for
 * every resolution (who, how, when), and the `notifyUrl` webhook when an escalation opens
 * (docs/dev-pdp.md, "The reviewer console").
 * @packageDocumentation
 */
import type { EvidenceRecord } from 'agent-pep/internal';
import { createNotifier, type Notifier } from './console/notify.js';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import { EscalationBook, type ResolvedEscalation } from './escalations.js';
import type { EvidenceLog, ReviewEntry } from './evidence.js';
import type { RefusedRequest } from './log.js';
import type { ResolvedDevPdpOptions } from './options.js';

/** The escalation book, and what stops its timer and webhook. @internal */
export interface Review {
  escalations: EscalationBook;
  close(): void;
}

/** The review record of a resolution. @internal */
export function reviewEntry(resolved: ResolvedEscalation): ReviewEntry {
  const { escalation: e } = resolved;
  const entry: ReviewEntry = {
    escalationId: e.id,
    outcome: resolved.outcome,
    by: resolved.by,
    requestId: e.requestId,
    agentId: e.subject.agentId,
    session: e.subject.session,
    latches: e.latches,
  };
  if (resolved.note !== undefined) entry.note = resolved.note;
  if (e.subject.tool !== undefined) entry.tool = e.subject.tool;
  if (e.subject.stage === 'action') entry.argsHash = e.subject.hash;
  else entry.contentHash = e.subject.hash;
  return entry;
}

/**
 * Makes the escalation book of a PDP: resolutions (and expiries) are appended to `evidence` and shown to
 * `onDecision`; openings are POSTed to `notifyUrl` when there is one. The sweep timer runs until `close()`.
 * @internal
 */
export function reviewing(
  o: ResolvedDevPdpOptions,
  evidence: EvidenceLog,
  log: (refusal: RefusedRequest) => void,
  baseUrl: () => string,
): Review {
  let notifier: Notifier | undefined;
  const escalations = new EscalationBook({
    approvalTtlMs: o.approvalTtlSec * 1000,
    escalationTtlMs: o.escalationTtlSec * 1000,
    onOpen: (e) => {
      const notice = { escalationId: e.id, agentId: e.subject.agentId, session: e.subject.session };
      notifier?.send({
        ...notice,
        ...(e.subject.tool !== undefined ? { tool: e.subject.tool } : {}),
        ...(e.reason !== undefined ? { reason: e.reason } : {}),
      });
    },
    onResolve: (resolved) => {
      // seq is taken now, in resolution order; a failed write is the log's own failure (it stops)
      evidence.appendReview(reviewEntry(resolved)).then(
        (record: EvidenceRecord) => {
          try {
            o.onDecision?.(structuredClone(record));
          } catch {
            // an observer cannot change a review
          }
        },
        () => {},
      );
    },
  });
  if (o.notifyUrl !== undefined) {
    const url = o.notifyUrl;
    const withConsole = o.console && o.reviewerApiKey !== undefined;
    notifier = createNotifier({
      url,
      get consoleUrl() {
        return withConsole ? `${baseUrl()}/console` : undefined;
      },
      timeoutMs: DEV_PDP_DEFAULTS.notifyTimeoutMs,
      concurrency: DEV_PDP_DEFAULTS.notifyConcurrency,
      log,
    });
  }
  escalations.start(DEV_PDP_DEFAULTS.escalationSweepMs);
  return {
    escalations,
    close() {
      escalations.stop();
      notifier?.close();
    },
  };
}
