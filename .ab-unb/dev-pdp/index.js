import { compileToolAudiences } from './audiences.js';
import { createConsole } from './console/routes.js';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import { EvidenceLog } from './evidence.js';
import { validateFault } from './faults.js';
import { refusalLogger } from './log.js';
import { resolveDevPdpOptions } from './options.js';
import { compilePolicy } from './policy.js';
import { reviewing } from './review.js';
import { createPdpServer } from './server.js';
import { SessionKeeper } from './sessions/keeper.js';
import { createMemorySessionStore } from './sessions/memory.js';
import { createRedisSessionStore } from './sessions/redis.js';
import { createSigningKey } from './signing.js';
export { DEV_PDP_DEFAULTS } from './defaults.js';
export { EscalationError } from './escalations.js';
export { evaluatePolicy } from './evaluate.js';
export { compilePolicy, InvalidPolicyError, policyJsonSchema } from './policy.js';
/** The session store the options name (memory by default), behind its per-session queue. */
async function openSessions(o) {
    const limits = { maxHistory: o.maxHistory, sessionTtlSec: o.sessionTtlSec };
    const store = o.sessionStore === undefined
        ? createMemorySessionStore(limits)
        : await createRedisSessionStore(o.sessionStore, limits, o.sessionStoreTimeoutMs, o.sessionStore.prefix ?? DEV_PDP_DEFAULTS.sessionStorePrefix);
    return new SessionKeeper(store, o.sessionStoreTimeoutMs);
}
/** The reviewer console, when there is a reviewer key and it is not turned off. */
function consoleOf(o, deps) {
    if (!o.console || o.reviewerApiKey === undefined)
        return undefined;
    return createConsole({ ...deps, reviewerApiKey: o.reviewerApiKey, apiKey: o.apiKey });
}
/**
 * Starts the local reference PDP.
 *
 * @param options - `{ policy, host?, port?, apiKey?, reviewerApiKey?, console?, approvalTtlSec?, escalationTtlSec?,
 *   notifyUrl?, audience?, toolAudiences?, permitTtlSec?, evidencePath?, key?, sessionStore?, maxHistory?,
 *   sessionTtlSec?, sessionStoreTimeoutMs?, maxBodyBytes?, headersTimeoutMs?, requestTimeoutMs?,
 *   keepAliveTimeoutMs?, onDecision?, log? }`; with a `reviewerApiKey` the reviewer console is served at
 *   `/console` (docs/dev-pdp.md, "The reviewer console"); sessions in docs/dev-pdp.md, "Sessions"
 * @returns the running PDP: `url`, `jwksUrl`, `issuer`, `evidence()`, `setFault()`, `resolveEscalation()`, `close()`
 * @throws InvalidPolicyError (a TypeError, `option` = 'policy') listing every problem of an invalid
 *   policy by path, latch id and reason
 * @throws TypeError for an unknown option or a bad one, with `err.option` naming its path
 * @remarks A development and test tool, not a production PDP: one process, state in memory, a
 * signing key made at start unless one is given (permits from an earlier run do not verify against a
 * new key). It binds to 127.0.0.1 unless told otherwise. Policy regexes are RE2 syntax, matched in
 * linear time, so no request can stall it; a slow client is cut off after `headersTimeoutMs` /
 * `requestTimeoutMs`. It serves its native protocol (docs/fail-closed.md) and AuthZEN 1.0
 * (`/access/v1/evaluation`, `/access/v1/evaluations`, `/.well-known/authzen-configuration`).
 * @example
 * ```ts
 * import { startDevPdp } from 'agent-pep/dev-pdp';
 * const pdp = await startDevPdp({ policy: { agents: ['support-ai'], latches: [] } });
 * const pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's1',
 *   permits: { keys: pdp.jwksUrl, issuer: pdp.issuer } });
 * // ...
 * await pdp.close();
 * ```
 */
export async function startDevPdp(options) {
    const o = resolveDevPdpOptions(options);
    const toolAudiences = compileToolAudiences(o.toolAudiences);
    const policy = compilePolicy(o.policy);
    const key = await createSigningKey(o.key);
    const evidence = await EvidenceLog.open(key, o.evidencePath);
    let sessions;
    try {
        sessions = await openSessions(o);
    }
    catch (error) {
        await evidence.close();
        throw error;
    }
    const log = refusalLogger(o.log);
    let issuer = '';
    const review = reviewing(o, evidence, log, () => issuer);
    const { escalations } = review;
    let fault = null;
    const pdpServer = createPdpServer({
        policy,
        key,
        evidence,
        escalations,
        sessions,
        audience: o.audience,
        toolAudiences,
        permitTtlSec: o.permitTtlSec,
        maxBodyBytes: o.maxBodyBytes,
        timeouts: {
            headersTimeoutMs: o.headersTimeoutMs,
            requestTimeoutMs: o.requestTimeoutMs,
            keepAliveTimeoutMs: o.keepAliveTimeoutMs,
        },
        issuer: () => issuer,
        fault: () => fault,
        apiKey: o.apiKey,
        reviewerApiKey: o.reviewerApiKey,
        console: consoleOf(o, { escalations, evidence, keys: key.jwks, log }),
        onDecision: o.onDecision,
        log,
    });
    const { server } = pdpServer;
    try {
        await new Promise((resolve, reject) => {
            server.once('error', reject);
            server.listen(o.port, o.host, () => {
                server.off('error', reject);
                resolve();
            });
        });
    }
    catch (error) {
        review.close();
        await sessions.close();
        await evidence.close();
        throw error;
    }
    const address = server.address();
    const hostPart = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
    issuer = `http://${hostPart}:${address.port}`;
    let closed;
    return Object.freeze({
        url: issuer,
        jwksUrl: `${issuer}/.well-known/jwks.json`,
        issuer,
        audience: o.audience,
        kid: key.kid,
        jwks: structuredClone(key.jwks),
        evidence: () => evidence.records(),
        setFault(next) {
            fault = validateFault(next);
        },
        resolveEscalation(id, resolution) {
            escalations.resolve(id, resolution, 'process');
        },
        close() {
            review.close();
            closed ??= pdpServer
                .close()
                .then(() => sessions.close())
                .then(() => evidence.close());
            return closed;
        },
    });
}
