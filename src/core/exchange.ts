/**
 * One decision over the network: the deadline, the attempts (with `attemptTimeoutMs`), the caller's
 * abort, `close()`, and retries -> an outcome. Never rejects: every failure becomes a synthesized
 * BLOCK with its fail-closed code (docs/fail-closed.md). The same exchange carries one AuthZEN
 * evaluation, an `evaluations` batch (one outcome per call, docs/authzen.md) and the discovery document.
 * @internal
 */
import { type FailClosedCode, type PolicyDecision, synthesizeBlock } from '../decision.js';
import { ABORT_CAUSES, Abort, type AbortCause, AbortReason } from '../internal/abort.js';
import { now } from '../internal/deadline.js';
import { AttemptFailure } from '../internal/failure.js';
import type { Inflight } from '../internal/inflight.js';
import type { BoundPermit } from '../permit/binding.js';
import type { HttpResponse, HttpTransport } from '../transport/http.js';
import { encodeRequest, parseResponse } from '../wire/agent-pep.js';
import { encodeEvaluation, parseEvaluation } from '../wire/authzen.js';
import { type EnforceOptions, toDecision } from './enforceable.js';
import type { Prepared } from './request.js';
import { withRetries } from './retry.js';

/** What a fail-closed end of each abort cause is called: the one table, kept in `internal/abort.ts`. */
export { ABORT_CAUSES };

/** A decision and the HTTP attempts it took. */
export interface Outcome {
  decision: PolicyDecision;
  attempts: number;
  /** The args that were sent (action), after any interceptor's replacement: what the permit binds. */
  args?: Record<string, unknown> | undefined;
  /** What rule 5 decoded and hashed for the permit (action with `permits`), for `guardTool` to reuse. */
  bound?: BoundPermit | undefined;
}

/** What one client shares between its decisions (and its `withSession` clients). */
export interface DecisionContext {
  readonly transport: HttpTransport;
  /** Every decision in flight, for `close()` to stop. */
  readonly inflight: Inflight;
  readonly retries: number;
  readonly attemptTimeoutMs: number;
  readonly enforce: EnforceOptions;
  /** The wire: the agent-pep protocol (docs/fail-closed.md) or AuthZEN 1.0 (docs/authzen.md). */
  readonly protocol: 'agent-pep' | 'authzen';
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

/** What one HTTP exchange (retries included) came to: the value read from the answer, or its failure. */
export type Exchanged<T> =
  | { ok: true; value: T; attempts: number }
  | { ok: false; code: FailClosedCode; message: string; attempts: number; status?: number | undefined };

/** What one exchange sends: a POST of `body` (a GET when undefined) to `path`. */
export interface Sendable {
  path: string;
  headers: Record<string, string>;
  /** Builds the body once; a throw is `invalid_request`. */
  body: () => string | undefined;
}

function failed(code: FailClosedCode, message: string, attempts = 0, status?: number): Exchanged<never> {
  return { ok: false, code, message, attempts, status };
}

/**
 * One HTTP exchange within `deadlineAt` (a `performance.now()` value): the attempts (with
 * `attemptTimeoutMs`), the caller's abort, `close()`, and retries; `read` turns a whole status-200
 * answer into a value or throws an {@link AttemptFailure}. Resolves, never rejects.
 */
export function exchange<T>(
  ctx: DecisionContext,
  signal: AbortSignal | undefined,
  sendable: Sendable,
  deadlineAt: number,
  read: (res: HttpResponse) => T,
): Promise<Exchanged<T>> {
  if (signal?.aborted) return Promise.resolve(failed('aborted', ABORT_CAUSES.caller.message));
  if (ctx.closed) return Promise.resolve(failed('pdp_unreachable', ABORT_CAUSES.closed.message));
  const remaining = deadlineAt - now();
  if (remaining <= 0) return Promise.resolve(failed('pdp_timeout', ABORT_CAUSES.deadline.message));
  let body: string | undefined;
  try {
    body = sendable.body();
  } catch {
    return Promise.resolve(failed('invalid_request', 'the request could not be serialized'));
  }
  const { path, headers } = sendable;

  return new Promise<Exchanged<T>>((resolve) => {
    // Not an AbortController: see internal/abort.ts (this is the per-decision hot path).
    const ctrl = new Abort();
    let attempts = 0;
    let done = false;
    const finish = (o: Exchanged<T>): void => {
      if (done) return;
      done = true;
      resolve(o);
      clearTimeout(timer);
      ctx.inflight.delete(entry);
      try {
        signal?.removeEventListener('abort', onCallerAbort);
      } catch {
        // a caller's signal that throws here cannot keep the decision from resolving
      }
    };
    // Ends the exchange at once; the attempt in flight is aborted and its outcome ignored.
    const stop = (cause: AbortCause): void => {
      if (done) return;
      ctrl.abort(new AbortReason(cause));
      const { code, message } = ABORT_CAUSES[cause];
      finish(failed(code, message, attempts));
    };
    const onCallerAbort = (): void => stop('caller');
    const timer = setTimeout(stop, remaining, 'deadline');
    const entry = ctx.inflight.add(stop);
    try {
      signal?.addEventListener('abort', onCallerAbort, { once: true });
    } catch {
      finish(failed('invalid_request', 'signal must be an AbortSignal'));
      return;
    }

    // An attempt that the deadline bounds anyway (the default) needs no timer or signal of its own.
    const attempt = (n: number): Promise<T> => {
      attempts = n;
      if (ctx.attemptTimeoutMs < deadlineAt - now()) {
        return timedAttempt(ctx, { path, headers, body: () => body }, ctrl, read);
      }
      return ctx.transport.send(body, headers, ctrl, path).then(read);
    };

    withRetries(attempt, { retries: ctx.retries, deadlineAt, signal: () => ctrl.signal }).then(
      (value) => finish({ ok: true, value, attempts }),
      (err: unknown) => {
        if (err instanceof AttemptFailure) finish(failed(err.code, err.message, attempts, err.status));
        else if (ctrl.aborted) stop('deadline');
        else finish(failed('pdp_unreachable', 'PDP request failed', attempts));
      },
    );
  });
}

/** An attempt under `attemptTimeoutMs`: its own signal, aborted by its timer or by the decision's `ctrl`. */
async function timedAttempt<T>(
  ctx: DecisionContext,
  one: Sendable,
  ctrl: Abort,
  read: (res: HttpResponse) => T,
): Promise<T> {
  const per = new Abort();
  const forward = (): void => per.abort(ctrl.reason);
  ctrl.addEventListener('abort', forward);
  const attemptTimer = setTimeout(() => per.abort(new AbortReason('attempt_timeout')), ctx.attemptTimeoutMs);
  try {
    return read(await ctx.transport.send(one.body(), one.headers, per, one.path));
  } finally {
    clearTimeout(attemptTimer);
    ctrl.removeEventListener('abort', forward);
  }
}

/** An exchange's failure as a synthesized-BLOCK outcome for one call. */
export function failedOutcome(sent: Prepared['sent'], r: Exchanged<unknown> & { ok: false }): Outcome {
  return blockOutcome(sent, r.code, r.message, r.attempts, r.status);
}

/**
 * Sends one prepared request and enforces the answer, within `deadlineAt` (a `performance.now()` value),
 * over the client's protocol: the agent-pep wire (docs/fail-closed.md) or one AuthZEN evaluation (docs/authzen.md) to
 * `path`. Resolves, never rejects.
 */
export async function decide(
  ctx: DecisionContext,
  p: Prepared,
  headers: Record<string, string>,
  deadlineAt: number,
  path: string,
): Promise<Outcome> {
  const { sent } = p;
  const authzen = ctx.protocol === 'authzen';
  const r = await exchange(
    ctx,
    p.call.signal,
    { path, headers, body: () => (authzen ? encodeEvaluation(p) : encodeRequest(p.req, p.sent.argsJson)) },
    deadlineAt,
    (res) => {
      const { response, raw } = authzen ? parseEvaluation(res.body) : parseResponse(res.body);
      return toDecision(response, raw, sent, res.headers['x-request-id'], ctx.enforce);
    },
  );
  return withSent(p, r.ok ? { decision: r.value, attempts: r.attempts } : failedOutcome(sent, r));
}

/**
 * An outcome with what was sent (the args) and what rule 5 bound (the permit), for `guardTool`; after
 * an interceptor's `proceedWith`, an ALLOW or WARN carries the replacement as `transformedContent` or
 * `transformedArgs` unless the PDP transformed it further (docs/interceptors.md: what continues is
 * exactly what was decided).
 */
export function withSent(p: Prepared, outcome: Outcome): Outcome {
  const { sent } = p;
  outcome.args = sent.args;
  outcome.bound = sent.bound;
  const d = outcome.decision;
  if (p.replaced && (d.verdict === 'ALLOW' || d.verdict === 'WARN')) {
    if (sent.stage === 'action') {
      if (d.transformedArgs === undefined && sent.args !== undefined) d.transformedArgs = sent.args;
    } else if (d.transformedContent === undefined && p.req.content !== undefined) {
      d.transformedContent = p.req.content;
    }
  }
  return outcome;
}
