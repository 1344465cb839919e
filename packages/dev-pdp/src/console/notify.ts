/**
 * The `notifyUrl` webhook: a POST of `{ escalationId, agentId, session, tool, reason, consoleUrl }` when
 * an escalation opens. Best effort: it never delays the decision (nothing waits for it), each POST is
 * bounded in time, at most a few are in flight, and a failure is logged with its status and code only
 * (docs/dev-pdp.md, "The reviewer console").
 * @packageDocumentation
 */
import type { RefusedRequest } from '../log.js';

/** What a notification says. @internal */
export interface EscalationNotice {
  escalationId: string;
  agentId: string;
  session: string;
  tool?: string;
  reason?: string;
}

/** Settings of {@link createNotifier}. @internal */
export interface NotifierOptions {
  url: string;
  /** The console's URL (without the `#id`), or undefined when there is no console. */
  consoleUrl: string | undefined;
  timeoutMs: number;
  concurrency: number;
  log(entry: RefusedRequest): void;
}

/** A notifier: `send` starts a POST and returns at once; `close` aborts those in flight. @internal */
export interface Notifier {
  send(notice: EscalationNotice): void;
  close(): void;
}

const ROUTE = '(notify)';

/** Makes the webhook notifier. @internal */
export function createNotifier(options: NotifierOptions): Notifier {
  const inFlight = new Set<AbortController>();
  let closed = false;
  const fail = (status: number, code: string) => options.log({ status, code, method: 'POST', route: ROUTE });

  async function post(notice: EscalationNotice, controller: AbortController): Promise<void> {
    const body = {
      escalationId: notice.escalationId,
      agentId: notice.agentId,
      session: notice.session,
      tool: notice.tool ?? null,
      reason: notice.reason ?? null,
      consoleUrl: options.consoleUrl === undefined ? null : `${options.consoleUrl}#${notice.escalationId}`,
    };
    const timer = setTimeout(() => controller.abort(), options.timeoutMs);
    try {
      const res = await fetch(options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        redirect: 'manual',
        signal: controller.signal,
      });
      await res.body?.cancel().catch(() => {});
      if (res.status < 200 || res.status > 299) fail(res.status, 'notify_failed');
    } catch {
      if (!closed) fail(0, controller.signal.aborted ? 'notify_timeout' : 'notify_unreachable');
    } finally {
      clearTimeout(timer);
      inFlight.delete(controller);
    }
  }

  return {
    send(notice) {
      if (closed) return;
      if (inFlight.size >= options.concurrency) {
        fail(0, 'notify_dropped');
        return;
      }
      const controller = new AbortController();
      inFlight.add(controller);
      void post(notice, controller);
    },
    close() {
      closed = true;
      for (const controller of inFlight) controller.abort();
      inFlight.clear();
    },
  };
}
