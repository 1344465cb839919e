import { validateTelemetry } from '../telemetry.js';
import { DEFAULTS } from './defaults.js';
import { validateInterceptors } from './interceptors.js';
import { booleanOption, integerOption, msOption, nonEmptyStringOption, optionError, refuseUnknownKeys } from './kit.js';
export { DEFAULTS } from './defaults.js';
const SCOPE = 'createPep';
function fail(path, problem) {
    optionError(SCOPE, path, problem);
}
const nonEmptyString = (v, name) => nonEmptyStringOption(SCOPE, name, v);
const positiveInt = (v, name, dflt, allowZero = false) => integerOption(SCOPE, name, v, dflt, allowZero ? 0 : 1);
/** A millisecond option: the kit's one rule (1 to 600000). */
const duration = (v, name, dflt) => msOption(SCOPE, name, v, dflt);
const optionalBoolean = (v, name, dflt) => booleanOption(SCOPE, name, v, dflt);
const KNOWN_OPTIONS = new Set([
    'pdpUrl',
    'protocol',
    'discover',
    'agentId',
    'session',
    'apiKey',
    'timeoutMs',
    'attemptTimeoutMs',
    'retries',
    'maxResponseBytes',
    'permits',
    'simulated',
    'dispatcher',
    'connections',
    'requireEcho',
    'interceptors',
    'onDecision',
    'telemetry',
]);
const KNOWN_PERMITS_OPTIONS = new Set(['keys', 'issuer', 'algorithms', 'clockToleranceSec']);
/**
 * Validates options and applies {@link DEFAULTS}. `permits` is checked further by the permit checker,
 * which `createPep` builds at once (one set of rules, in `src/permit/`).
 * @returns one frozen config, read by every step of the client
 * @throws TypeError with `option` naming the first bad or unknown option (never its value, which may be a secret)
 * @internal
 */
export function resolveOptions(options) {
    if (typeof options !== 'object' || options === null)
        fail('(options)', 'expected an object');
    refuseUnknownKeys(SCOPE, options, KNOWN_OPTIONS);
    const raw = options.pdpUrl;
    if (typeof raw !== 'string' && !(raw instanceof URL))
        fail('pdpUrl', 'expected an http(s) URL');
    let url;
    try {
        url = new URL(String(raw));
    }
    catch {
        fail('pdpUrl', 'not a valid URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
        fail('pdpUrl', 'must be http: or https:');
    if (url.username !== '' || url.password !== '')
        fail('pdpUrl', 'must not carry credentials; use apiKey');
    if (url.search !== '' || url.hash !== '')
        fail('pdpUrl', 'must not have a query or fragment');
    const base = url.pathname.replace(/\/+$/, '');
    const protocol = options.protocol ?? DEFAULTS.protocol;
    if (protocol !== 'agent-pep' && protocol !== 'authzen')
        fail('protocol', "expected 'agent-pep' or 'authzen'");
    const discover = optionalBoolean(options.discover, 'discover', DEFAULTS.discover);
    if (discover && protocol !== 'authzen')
        fail('discover', "only with protocol: 'authzen'");
    const agentId = nonEmptyString(options.agentId, 'agentId');
    const session = nonEmptyString(options.session, 'session');
    let apiKey;
    if (options.apiKey !== undefined) {
        if (typeof options.apiKey !== 'string' || options.apiKey.length === 0)
            fail('apiKey', 'expected a non-empty string');
        if (!/^[\x21-\x7e]+$/.test(options.apiKey))
            fail('apiKey', 'must be printable ASCII without spaces');
        apiKey = options.apiKey;
    }
    const timeoutMs = duration(options.timeoutMs, 'timeoutMs', DEFAULTS.timeoutMs);
    const attemptTimeoutMs = duration(options.attemptTimeoutMs, 'attemptTimeoutMs', timeoutMs);
    const retries = positiveInt(options.retries, 'retries', DEFAULTS.retries, true);
    if (retries > 10)
        fail('retries', 'at most 10');
    const maxResponseBytes = positiveInt(options.maxResponseBytes, 'maxResponseBytes', DEFAULTS.maxResponseBytes);
    let permits;
    if (options.permits === false || options.permits === undefined)
        permits = options.permits;
    else if (typeof options.permits !== 'object' || options.permits === null)
        fail('permits', 'expected { keys, issuer } or false');
    else {
        refuseUnknownKeys(SCOPE, options.permits, KNOWN_PERMITS_OPTIONS, 'permits');
        permits = options.permits;
    }
    const simulated = optionalBoolean(options.simulated, 'simulated', DEFAULTS.simulated);
    const d = options.dispatcher;
    if (d !== undefined && (typeof d !== 'object' || d === null || typeof d.dispatch !== 'function')) {
        fail('dispatcher', 'expected an undici Dispatcher');
    }
    const connections = options.connections === undefined ? undefined : positiveInt(options.connections, 'connections', 1);
    const requireEcho = optionalBoolean(options.requireEcho, 'requireEcho', DEFAULTS.requireEcho);
    const interceptors = validateInterceptors(options.interceptors, (path, problem) => fail(path, problem));
    if (options.onDecision !== undefined && typeof options.onDecision !== 'function')
        fail('onDecision', 'expected a function');
    return Object.freeze({
        origin: url.origin,
        path: protocol === 'authzen' ? `${base}/access/v1/evaluation` : `${base}/api/policy/authorize`,
        pdp: url,
        base,
        protocol,
        discover,
        agentId,
        session,
        apiKey,
        timeoutMs,
        attemptTimeoutMs,
        retries,
        maxResponseBytes,
        permits,
        simulated,
        dispatcher: d,
        connections,
        requireEcho,
        interceptors,
        onDecision: options.onDecision,
        telemetry: validateTelemetry(options.telemetry, fail),
    });
}
