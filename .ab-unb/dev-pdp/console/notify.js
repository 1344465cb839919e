const ROUTE = '(notify)';
/** Makes the webhook notifier. @internal */
export function createNotifier(options) {
    const inFlight = new Set();
    let closed = false;
    const fail = (status, code) => options.log({ status, code, method: 'POST', route: ROUTE });
    async function post(notice, controller) {
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
            await res.body?.cancel().catch(() => { });
            if (res.status < 200 || res.status > 299)
                fail(res.status, 'notify_failed');
        }
        catch {
            if (!closed)
                fail(0, controller.signal.aborted ? 'notify_timeout' : 'notify_unreachable');
        }
        finally {
            clearTimeout(timer);
            inFlight.delete(controller);
        }
    }
    return {
        send(notice) {
            if (closed)
                return;
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
            for (const controller of inFlight)
                controller.abort();
            inFlight.clear();
        },
    };
}
