/**
 * `pep.awaitResolution(escalationId, { signal?, timeoutMs? })`: waits for a reviewer to resolve an
 * escalation, by polling the PDP's `GET /api/escalations/{id}` (the agent's API key; the answer is
 * `{ status }` and nothing else) with backoff, within one deadline. It never rejects on a PDP failure:
 * a PDP that cannot say is `unavailable`, an escalation still open at the deadline (or when the
 * caller aborts) is `pending`, and only `approved` means the identical call may be retried (the PDP
 * decides that call again, and grants it once). docs/dev-pdp.md, "Waiting for a review".
 * @packageDocumentation
 */
import type { AttemptFailure } from '../internal/failure.js';
import type { Shared } from './shared.js';

/** Where an escalation stands, as {@link EscalationWait} reports it. */
export type EscalationWaitStatus = 'approved' | 'denied' | 'expired' | 'pending' | 'unavailable';

/** What `awaitResolution` resolves with. */
export interface EscalationWait {
  /** The escalation asked about. */
  escalationId: string;
  /**
   * `approved`: retry the identical call (same tool and args, same session) and the PDP decides it
   * again (an ALLOW, once); `denied` / `expired`: the identical call is a BLOCK; `pending`: still open
   * when `timeoutMs` ran out or `signal` aborted; `unavailable`: the PDP could not say (down, an unknown
   * id, a wrong key, a PDP without the endpoint): treat it as not approved.
   */
  status: EscalationWaitStatus;
  /** `status === 'approved'`. */
  approved: boolean;
}

/** Options of `awaitResolution`. */
export interface AwaitResolutionOptions {
  /** Stops waiting (resolves `pending`, or `unavailable` when the last poll failed). */
  signal?: AbortSignal;
  /** How long to wait in all, milliseconds, 1 to 86400000. @defaultValue 60000 */
  timeoutMs?: number;
}

/** Waits of `awaitResolution`, milliseconds. @internal */
export const ESCALATION_WAIT = Object.freeze({
  timeoutMs: 60_000,
  maxTimeoutMs: 86_400_000,
  /** First pause between two polls; each next one doubles, up to `maxDelayMs`, with ±20 % jitter. */
  firstDelayMs: 250,
  maxDelayMs: 5000,
});

const ID = /^[A-Za-z0-9_-]{1,200}$/;
const FINAL: ReadonlySet<string> = new Set(['approved', 'denied', 'expired']);
/** Statuses after which asking again cannot help: no such escalation here, or no right to ask. */
const GIVE_UP: ReadonlySet<number> = new Set([400, 401, 403, 404, 405]);

function checkOptions(escalationId: unknown, opts: AwaitResolutionOptions | undefined): number {
  const fail = (option: string, message: string) =>
    Object.assign(new TypeError(`awaitResolution: ${option} ${message}`), { option });
  if (typeof escalationId !== 'string' || !ID.test(escalationId)) {
    throw fail('escalationId', 'must be 1-200 characters of A-Z a-z 0-9 _ -');
  }
  if (opts !== undefined && (typeof opts !== 'object' || opts === null)) throw fail('options', 'must be an object');
  const { timeoutMs = ESCALATION_WAIT.timeoutMs, signal } = opts ?? {};
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > ESCALATION_WAIT.maxTimeoutMs) {
    throw fail('timeoutMs', `must be an integer from 1 to ${ESCALATION_WAIT.maxTimeoutMs}`);
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw fail('signal', 'must be an AbortSignal');
  return timeoutMs;
}

/** Sleeps `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** One poll: the status, or `unavailable` (`final` when asking again cannot help). */
async function poll(
  shared: Shared,
  path: string,
  signal: AbortSignal,
): Promise<{ status: EscalationWaitStatus; final: boolean }> {
  try {
    const res = await shared.ctx.transport.send(undefined, shared.headers, signal, path);
    const status = (JSON.parse(Buffer.from(res.body).toString('utf8')) as { status?: unknown } | null)?.status;
    if (typeof status === 'string' && FINAL.has(status)) return { status: status as EscalationWaitStatus, final: true };
    if (status === 'pending') return { status: 'pending', final: false };
    return { status: 'unavailable', final: false };
  } catch (error) {
    const code = (error as Partial<AttemptFailure>).status;
    return { status: 'unavailable', final: code !== undefined && GIVE_UP.has(code) };
  }
}

/**
 * Waits for escalation `escalationId` to be resolved (see {@link EscalationWait}). Never rejects but
 * for a caller's mistake.
 * @throws TypeError (with `option`) for an id that is not 1-200 of `[A-Za-z0-9_-]`, or a bad option
 * @internal
 */
export async function awaitResolution(
  shared: Shared,
  escalationId: string,
  opts?: AwaitResolutionOptions,
): Promise<EscalationWait> {
  const timeoutMs = checkOptions(escalationId, opts);
  const result = (status: EscalationWaitStatus): EscalationWait => ({
    escalationId,
    status,
    approved: status === 'approved',
  });
  if (shared.ctx.closed) return result('unavailable');
  const path = `${shared.opts.base}/api/escalations/${escalationId}`;
  const deadline = AbortSignal.timeout(timeoutMs);
  const stop = opts?.signal === undefined ? deadline : AbortSignal.any([deadline, opts.signal]);
  let delay: number = ESCALATION_WAIT.firstDelayMs;
  let last: EscalationWaitStatus = 'pending';
  while (!stop.aborted && !shared.ctx.closed) {
    const attempt = AbortSignal.any([stop, AbortSignal.timeout(shared.opts.attemptTimeoutMs)]);
    const polled = await poll(shared, path, attempt);
    if (polled.final) return result(polled.status);
    // an attempt cut short by the deadline or the caller says nothing about the PDP
    if (!stop.aborted) last = polled.status;
    await pause(delay * (0.8 + Math.random() * 0.4), stop);
    delay = Math.min(delay * 2, ESCALATION_WAIT.maxDelayMs);
  }
  return result(shared.ctx.closed ? 'unavailable' : last);
}
