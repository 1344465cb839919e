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
import type { Inflight, InflightEntry } from '../internal/inflight.js';
import type { BoundPermit } from '../permit/binding.js';
import type { AttemptReceiver, HttpResponse, Transport } from '../transport/types.js';
import { encodeRequest, parseResponse } from '../wire/agent-pep.js';
import { encodeEvaluation, parseEvaluation } from '../wire/authzen.js';
import { type EnforceOptions, toDecision } from './enforceable.js';
import type { Prepared } from './request.js';
import { retryAfterFirst } from './retry.js';

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
  readonly transport: Transport;
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

/** Why an exchange ends before it starts: the caller aborted, the client is closed, or the deadline passed. */
function refusedAtOnce(
  ctx: DecisionContext,
  signal: AbortSignal | undefined,
  leftMs: number,
): Exchanged<never> | undefined {
  if (signal?.aborted) return failed('aborted', ABORT_CAUSES.caller.message);
  if (ctx.closed) return failed('pdp_unreachable', ABORT_CAUSES.closed.message);
  if (leftMs <= 0) return failed('pdp_timeout', ABORT_CAUSES.deadline.message);
  return undefined;
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
  return new Promise<Exchanged<T>>((resolve) => exchangeThen(ctx, signal, sendable, deadlineAt, read, resolve));
}

/**
 * {@link exchange} without a promise of its own: `done` is called once, with what the exchange came to,
 * possibly before this returns (a call refused at once) and often from inside the transport's
 * handler, so `read` and `done` must not throw (`read`'s throw is caught: it is the attempt's failure).
 * The decision's hot path: a successful first attempt settles with no promise and no microtask of its own.
 */
export function exchangeThen<T>(
  ctx: DecisionContext,
  signal: AbortSignal | undefined,
  sendable: Sendable,
  deadlineAt: number,
  read: (res: HttpResponse) => T,
  done: (o: Exchanged<T>) => void,
): void {
  const leftMs = deadlineAt - now();
  const refused = refusedAtOnce(ctx, signal, leftMs);
  if (refused) {
    done(refused);
    return;
  }
  let body: string | undefined;
  try {
    body = sendable.body();
  } catch {
    done(failed('invalid_request', 'the request could not be serialized'));
    return;
  }
  new Exchange(ctx, signal, sendable.path, sendable.headers, body, deadlineAt, read, done).start(leftMs);
}

/**
 * One exchange in flight ({@link exchangeThen}): its abort handle, its attempts, its place in the
 * client's in-flight registry (which stops it at its deadline), and the one `done` call. One object
 * per exchange, its methods shared; the callbacks the transport and the registry hold are its own.
 */
class Exchange<T> implements AttemptReceiver {
  // Not an AbortController: see internal/abort.ts (this is the per-decision hot path).
  readonly ctrl = new Abort();
  attempts = 1;
  ended = false;
  entry: InflightEntry | undefined = undefined;
  onCallerAbort: (() => void) | undefined = undefined;

  constructor(
    readonly ctx: DecisionContext,
    readonly signal: AbortSignal | undefined,
    readonly path: string,
    readonly headers: Record<string, string>,
    readonly body: string | undefined,
    readonly deadlineAt: number,
    readonly read: (res: HttpResponse) => T,
    readonly done: (o: Exchanged<T>) => void,
  ) {}

  /** Ends the exchange at once; the attempt in flight is aborted and its outcome ignored. */
  readonly stop = (cause: AbortCause): void => {
    if (this.ended) return;
    this.ctrl.abort(new AbortReason(cause));
    const { code, message } = ABORT_CAUSES[cause];
    this.finish(failed(code, message, this.attempts));
  };

  finish(o: Exchanged<T>): void {
    if (this.ended) return;
    this.ended = true;
    if (this.entry) this.ctx.inflight.delete(this.entry);
    if (this.onCallerAbort) {
      try {
        this.signal?.removeEventListener('abort', this.onCallerAbort);
      } catch {
        // a caller's signal that throws here cannot keep the decision from resolving
      }
    }
    this.done(o);
  }

  failedWith(err: unknown): void {
    if (err instanceof AttemptFailure) this.finish(failed(err.code, err.message, this.attempts, err.status));
    else if (this.ctrl.aborted) this.stop('deadline');
    else this.finish(failed('pdp_unreachable', 'PDP request failed', this.attempts));
  }

  succeeded(value: T): void {
    this.finish({ ok: true, value, attempts: this.attempts });
  }

  /** Registers the exchange (its deadline, the caller's abort) and sends the first attempt, `leftMs` before the deadline. */
  start(leftMs: number): void {
    const { ctx, signal } = this;
    // The deadline: the client's one timer stops this exchange with 'deadline' (internal/inflight.ts).
    this.entry = ctx.inflight.add(this.stop, this.deadlineAt);
    if (signal) {
      this.onCallerAbort = () => this.stop('caller');
      try {
        signal.addEventListener('abort', this.onCallerAbort, { once: true });
      } catch {
        this.finish(failed('invalid_request', 'signal must be an AbortSignal'));
        return;
      }
    }
    if (ctx.attemptTimeoutMs < leftMs) {
      this.attempt(1).then(
        (v) => this.succeeded(v),
        (e: unknown) => this.firstFailed(e),
      );
      return;
    }
    // The first attempt, which the deadline bounds anyway (the default): no timer, signal or promise
    // of its own; the answer is read in the transport's handler.
    ctx.transport.start(this.body, this.headers, this.ctrl, this.path, this);
  }

  /** The first attempt's whole answer (AttemptReceiver): read here, in the transport's handler. */
  onResponse(res: HttpResponse): void {
    if (this.ended) return;
    let value: T;
    try {
      value = this.read(res);
    } catch (err) {
      this.firstFailed(err);
      return;
    }
    this.succeeded(value);
  }

  /** The first attempt failed (AttemptReceiver). */
  onFailure(err: AttemptFailure): void {
    this.firstFailed(err);
  }

  /** The first attempt failed: the exchange fails with it, or retries (`retry.ts` decides). */
  firstFailed(err: unknown): void {
    if (this.ended) return;
    if (this.ctx.retries === 0) {
      this.failedWith(err);
      return;
    }
    const plan = { retries: this.ctx.retries, deadlineAt: this.deadlineAt, signal: () => this.ctrl.signal };
    retryAfterFirst(err, (n) => this.attempt(n), plan).then(
      (v) => this.succeeded(v),
      (e: unknown) => this.failedWith(e),
    );
  }

  /** Attempt `n` as a promise: retries, and a first attempt under its own `attemptTimeoutMs`. */
  attempt(n: number): Promise<T> {
    this.attempts = n;
    const { ctx, body } = this;
    if (ctx.attemptTimeoutMs < this.deadlineAt - now()) {
      return timedAttempt(ctx, { path: this.path, headers: this.headers, body: () => body }, this.ctrl, this.read);
    }
    return ctx.transport.send(body, this.headers, this.ctrl, this.path).then(this.read);
  }
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
 * `path`. Calls `done` once with the outcome, maybe before it returns, maybe from inside the
 * transport's handler ({@link exchangeThen}); `done` must not throw.
 */
export function decideThen(
  ctx: DecisionContext,
  p: Prepared,
  headers: Record<string, string>,
  deadlineAt: number,
  path: string,
  done: (o: Outcome) => void,
): void {
  const { sent } = p;
  const authzen = ctx.protocol === 'authzen';
  exchangeThen(
    ctx,
    p.call.signal,
    { path, headers, body: () => (authzen ? encodeEvaluation(p) : encodeRequest(p.req, p.sent.argsJson)) },
    deadlineAt,
    (res) => {
      const { response, raw } = authzen ? parseEvaluation(res.body) : parseResponse(res.body);
      return toDecision(response, raw, sent, res.headers['x-request-id'], ctx.enforce);
    },
    (r) => done(withSent(p, r.ok ? { decision: r.value, attempts: r.attempts } : failedOutcome(sent, r))),
  );
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
  if (p.route !== undefined && (d.verdict === 'ALLOW' || d.verdict === 'WARN')) {
    const other = d.route;
    if (other !== undefined && (other.to !== p.route.to || other.profile !== p.route.profile)) {
      const why = 'PDP decision is ambiguous: it routed the action to another sandbox than an interceptor did';
      outcome.decision = synthesizeBlock(d.stage, d.requestId, 'ambiguous_decision', why, outcome.attempts);
      return outcome;
    }
    // An interceptor's route: the action runs in the sandbox, whatever the PDP allowed (WARN with the route).
    d.route = p.route;
    d.verdict = 'WARN';
  }
  if (p.replaced && (d.verdict === 'ALLOW' || d.verdict === 'WARN')) {
    if (sent.stage === 'action') {
      if (d.transformedArgs === undefined && sent.args !== undefined) d.transformedArgs = sent.args;
    } else if (d.transformedContent === undefined && p.req.content !== undefined) {
      d.transformedContent = p.req.content;
    }
  }
  return outcome;
}
