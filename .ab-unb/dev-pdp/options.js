import { msOption, optionTypeError, refuseUnknownKeys as refuseUnknownKeysOf, } from '../internal/option-kit.js';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import { resolveSessionStoreOption } from './sessions/options.js';
/** Who validates, in every option error's message. */
const SCOPE = 'startDevPdp';
const KNOWN = new Set([
    'policy',
    'host',
    'port',
    'apiKey',
    'reviewerApiKey',
    'console',
    'approvalTtlSec',
    'escalationTtlSec',
    'notifyUrl',
    'audience',
    'toolAudiences',
    'permitTtlSec',
    'evidencePath',
    'key',
    'maxBodyBytes',
    'headersTimeoutMs',
    'requestTimeoutMs',
    'keepAliveTimeoutMs',
    'onDecision',
    'log',
    'sessionStore',
    'maxHistory',
    'sessionTtlSec',
    'sessionStoreTimeoutMs',
]);
/** Makes a `TypeError` whose `option` names the path at fault (the one option kit). @internal */
export function optionError(option, message) {
    return optionTypeError(SCOPE, option, message);
}
/** Refuses keys other than `known` in `value`, naming the first unknown one under `path`. @internal */
export function refuseUnknownKeys(value, known, path) {
    refuseUnknownKeysOf(SCOPE, value, known, path);
}
const nonEmpty = (value) => typeof value === 'string' && value.length > 0;
/** An integer option from `min` to `max`, or the default. @internal */
export function integerOption(value, name, min, max, fallback) {
    if (value === undefined)
        return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        throw optionError(name, `must be an integer from ${min} to ${max}`);
    }
    return value;
}
/** A millisecond option: the kit's one rule (an integer from 1 to 600000). */
function duration(value, name, fallback) {
    return msOption(SCOPE, name, value, fallback);
}
function seconds(value, name, fallback, max) {
    if (value === undefined)
        return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
        throw optionError(name, `must be an integer number of seconds from 1 to ${max}`);
    }
    return value;
}
function httpUrl(value, name) {
    if (value === undefined)
        return undefined;
    let url;
    try {
        url = typeof value === 'string' ? new URL(value) : undefined;
    }
    catch {
        url = undefined;
    }
    if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
        throw optionError(name, 'must be an http or https URL');
    }
    return url.href;
}
/** The review options: console, the two TTLs and the webhook. */
function reviewOptions(o) {
    if (o.console !== undefined && typeof o.console !== 'boolean')
        throw optionError('console', 'must be a boolean');
    const max = DEV_PDP_DEFAULTS.maxReviewTtlSec;
    return {
        console: o.console ?? o.reviewerApiKey !== undefined,
        approvalTtlSec: seconds(o.approvalTtlSec, 'approvalTtlSec', DEV_PDP_DEFAULTS.approvalTtlSec, max),
        escalationTtlSec: seconds(o.escalationTtlSec, 'escalationTtlSec', DEV_PDP_DEFAULTS.escalationTtlSec, max),
        notifyUrl: httpUrl(o.notifyUrl, 'notifyUrl'),
    };
}
/**
 * Validates the options of `startDevPdp` (not the policy, which `compilePolicy` checks) and fills in
 * the defaults.
 * @throws TypeError with `option` naming the path at fault, for an unknown key or a bad value
 * @internal
 */
export function resolveDevPdpOptions(options) {
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
        throw optionError('options', 'must be an object');
    }
    refuseUnknownKeys(options, KNOWN, '');
    const o = options;
    if (!('policy' in o) || o.policy === undefined)
        throw optionError('policy', 'is required');
    if (o.host !== undefined && !nonEmpty(o.host))
        throw optionError('host', 'must be a non-empty string');
    if (o.port !== undefined && (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535)) {
        throw optionError('port', 'must be an integer from 0 to 65535');
    }
    if (o.apiKey !== undefined && !nonEmpty(o.apiKey))
        throw optionError('apiKey', 'must be a non-empty string');
    if (o.reviewerApiKey !== undefined && !nonEmpty(o.reviewerApiKey))
        throw optionError('reviewerApiKey', 'must be a non-empty string');
    if (o.reviewerApiKey !== undefined && o.reviewerApiKey === o.apiKey) {
        throw optionError('reviewerApiKey', 'must differ from apiKey (an agent must not approve its own escalation)');
    }
    if (o.audience !== undefined && !nonEmpty(o.audience))
        throw optionError('audience', 'must be a non-empty string');
    const maxTtl = DEV_PDP_DEFAULTS.maxPermitTtlSec;
    if (o.permitTtlSec !== undefined &&
        (typeof o.permitTtlSec !== 'number' ||
            !Number.isInteger(o.permitTtlSec) ||
            o.permitTtlSec < 1 ||
            o.permitTtlSec > maxTtl)) {
        throw optionError('permitTtlSec', `must be an integer from 1 to ${maxTtl}`);
    }
    if (o.evidencePath !== undefined && !nonEmpty(o.evidencePath))
        throw optionError('evidencePath', 'must be a non-empty string');
    if (o.maxBodyBytes !== undefined &&
        (typeof o.maxBodyBytes !== 'number' ||
            !Number.isInteger(o.maxBodyBytes) ||
            o.maxBodyBytes < DEV_PDP_DEFAULTS.minBodyBytes ||
            o.maxBodyBytes > 2 ** 31)) {
        throw optionError('maxBodyBytes', `must be an integer from ${DEV_PDP_DEFAULTS.minBodyBytes} to 2^31`);
    }
    const headersTimeoutMs = duration(o.headersTimeoutMs, 'headersTimeoutMs', DEV_PDP_DEFAULTS.headersTimeoutMs);
    const requestTimeoutMs = duration(o.requestTimeoutMs, 'requestTimeoutMs', Math.max(DEV_PDP_DEFAULTS.requestTimeoutMs, headersTimeoutMs));
    if (requestTimeoutMs < headersTimeoutMs)
        throw optionError('requestTimeoutMs', 'must be at least headersTimeoutMs');
    const keepAliveTimeoutMs = duration(o.keepAliveTimeoutMs, 'keepAliveTimeoutMs', DEV_PDP_DEFAULTS.keepAliveTimeoutMs);
    if (o.onDecision !== undefined && typeof o.onDecision !== 'function')
        throw optionError('onDecision', 'must be a function');
    if (o.log !== undefined && o.log !== false && typeof o.log !== 'function') {
        throw optionError('log', 'must be false or a function');
    }
    return {
        policy: o.policy,
        host: o.host ?? DEV_PDP_DEFAULTS.host,
        port: o.port ?? DEV_PDP_DEFAULTS.port,
        apiKey: o.apiKey,
        reviewerApiKey: o.reviewerApiKey,
        ...reviewOptions(o),
        audience: o.audience ?? DEV_PDP_DEFAULTS.audience,
        toolAudiences: o.toolAudiences,
        permitTtlSec: o.permitTtlSec ?? DEV_PDP_DEFAULTS.permitTtlSec,
        evidencePath: o.evidencePath,
        key: o.key,
        maxBodyBytes: o.maxBodyBytes ?? DEV_PDP_DEFAULTS.maxBodyBytes,
        headersTimeoutMs,
        requestTimeoutMs,
        keepAliveTimeoutMs,
        onDecision: o.onDecision,
        log: o.log,
        ...resolveSessionOptions(o),
    };
}
/** The session options (docs/dev-pdp.md, Sessions), with their defaults. */
function resolveSessionOptions(o) {
    const d = DEV_PDP_DEFAULTS;
    return {
        sessionStore: resolveSessionStoreOption(o.sessionStore),
        maxHistory: integerOption(o.maxHistory, 'maxHistory', 1, d.maxMaxHistory, d.maxHistory),
        sessionTtlSec: integerOption(o.sessionTtlSec, 'sessionTtlSec', 1, d.maxSessionTtlSec, d.sessionTtlSec),
        sessionStoreTimeoutMs: duration(o.sessionStoreTimeoutMs, 'sessionStoreTimeoutMs', d.sessionStoreTimeoutMs),
    };
}
