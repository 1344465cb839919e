/**
 * One decision over the network: the deadline, the attempts (with `attemptTimeoutMs`), the caller's
 * abort, `close()`, and retries -> an outcome. Never rejects: every failure becomes a synthesized
 * BLOCK with its fail-closed code (CONTRACT.md section 3).
 * @internal
 */
import { type FailClosedCode, type PolicyDecision, synthesizeBlock } from './decision.js';
import { type EnforceOptions, toDecision } from './enforce.js';
import { AttemptFailure } from './internal/failure.js';
import { encodeRequest, parseResponse } from './protocol/agent-pep.js';
import type { Prepared } from './request.js';
import { withRetries } from './retry.js';
import { Abort, type AbortLike } from './transport/abort.js';
import { type AbortCause, AbortReason, type HttpTransport } from './transport/http.js';

/** A decision and the HTTP attempts it took. */
export interface Outcome {
  decision: PolicyDecision;
  attempts: number;
  /** The args that were sent (action), after any interceptor's replacement: what the permit binds. */
  args?: Record<string, unknown> | undefined;
}

/** What a fail-closed end of each abort cause is called (the one table of abort causes). */
export const ABORT_CAUSES: Readonly<Record<AbortCause, { code: FailClosedCode; message: string }>> = Object.freeze({
  deadline: { code: 'pdp_timeout', message: 'PDP decision deadline passed' },
  attempt_timeout: { code: 'pdp_timeout', message: 'PDP attempt timed out' },
  caller: { code: 'aborted', message: 'aborted by the caller' },
  closed: { code: 'pdp_unreachable', message: 'client closed' },
});

/** What one client shares between its decisions (and its `withSession` clients). */
export interface DecisionContext {
  readonly transport: HttpTransport;
  /** Stops every decision in flight (used by `close()`). */
  readonly inflight: Set<(cause: AbortCause) => void>;
  readonly retries: number;
  readonly attemptTimeoutMs: number;
  readonly enforce: EnforceOptions;
  closed: boolean;
}

/** A synthesized-BLOCK outcome. */
export function blockOutcome(
  p: { stage: PolicyDecision['stage']; requestId: string },
  code: FailClosedCode,
  message: string,
  attempts = 0,
  status?: number,
): Outcome {
  return { decision: synthesizeBlock(p.stage, p.requestId, code, message, attempts, status), attempts };
}

/**
 * Sends one prepared request and enforces the answer, within `deadlineAt` (a `performance.now()` value).
 * Resolves, never rejects.
 */
export function decide(
  ctx: DecisionContext,
  p: Prepared,
  headers: Record<string, string>,
  deadlineAt: number,
): Promise<Outcome> {
  const { sent } = p;
  const signal = p.call.signal;
  if (signal?.aborted) return Promise.resolve(blockOutcome(sent, 'aborted', ABORT_CAUSES.caller.message));
  if (ctx.closed) return Promise.resolve(blockOutcome(sent, 'pdp_unreachable', ABORT_CAUSES.closed.message));
  const remaining = deadlineAt - performance.now();
  if (remaining <= 0) return Promise.resolve(blockOutcome(sent, 'pdp_timeout', ABORT_CAUSES.deadline.message));
  let body: string;
  try {
    body = encodeRequest(p.req);
  } catch {
    return Promise.resolve(blockOutcome(sent, 'invalid_request', 'the request could not be serialized'));
  }

  return new Promise<Outcome>((resolve) => {
    // Not an AbortController: see transport/abort.ts (this is the per-decision hot path).
    const ctrl = new Abort();
    let attempts = 0;
    let done = false;
    const finish = (o: Outcome): void => {
      if (done) return;
      done = true;
      resolve(o);
      clearTimeout(timer);
      ctx.inflight.delete(stop);
      try {
        signal?.removeEventListener('abort', onCallerAbort);
      } catch {
        // a caller's signal that throws here cannot keep the decision from resolving
      }
    };
    // Ends the decision at once; the attempt in flight is aborted and its outcome ignored.
    const stop = (cause: AbortCause): void => {
      if (done) return;
      ctrl.abort(new AbortReason(cause));
      const { code, message } = ABORT_CAUSES[cause];
      finish(blockOutcome(sent, code, message, attempts));
    };
    const onCallerAbort = (): void => stop('caller');
    const timer = setTimeout(stop, remaining, 'deadline');
    ctx.inflight.add(stop);
    try {
      signal?.addEventListener('abort', onCallerAbort, { once: true });
    } catch {
      finish(blockOutcome(sent, 'invalid_request', 'signal must be an AbortSignal'));
      return;
    }

    const attempt = async (n: number): Promise<PolicyDecision> => {
      attempts = n;
      let attemptSignal: AbortLike = ctrl;
      let attemptTimer: NodeJS.Timeout | undefined;
      let unlink: (() => void) | undefined;
      if (ctx.attemptTimeoutMs < deadlineAt - performance.now()) {
        const per = new Abort();
        const forward = (): void => per.abort(ctrl.reason);
        ctrl.addEventListener('abort', forward);
        unlink = () => ctrl.removeEventListener('abort', forward);
        attemptTimer = setTimeout(() => per.abort(new AbortReason('attempt_timeout')), ctx.attemptTimeoutMs);
        attemptSignal = per;
      }
      try {
        const res = await ctx.transport.send(body, headers, attemptSignal);
        const { response, raw } = parseResponse(res.body);
        return toDecision(response, raw, sent, res.headers['x-request-id'], ctx.enforce);
      } finally {
        if (attemptTimer) clearTimeout(attemptTimer);
        unlink?.();
      }
    };

    withRetries(attempt, { retries: ctx.retries, deadlineAt, signal: () => ctrl.signal }).then(
      (decision) => finish({ decision, attempts }),
      (err: unknown) => {
        if (err instanceof AttemptFailure) finish(blockOutcome(sent, err.code, err.message, attempts, err.status));
        else if (ctrl.aborted) stop('deadline');
        else finish(blockOutcome(sent, 'pdp_unreachable', 'PDP request failed', attempts));
      },
    );
  });
}
