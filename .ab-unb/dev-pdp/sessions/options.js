/**
 * The `sessionStore` option of `startDevPdp` (docs/dev-pdp.md): `{ redis, prefix? }`, checked
 * strictly (unknown keys are a `TypeError` with `err.option`).
 * @packageDocumentation
 */
import { optionTypeError, refuseUnknownKeys as refuseUnknownKeysOf } from '../../internal/option-kit.js';
const SCOPE = 'startDevPdp';
const optionError = (option, message) => optionTypeError(SCOPE, option, message);
const refuseUnknownKeys = (value, known, path) => refuseUnknownKeysOf(SCOPE, value, known, path);
const KNOWN = new Set(['redis', 'prefix']);
/** Checks `sessionStore`. @throws TypeError with `option` (`sessionStore`, `sessionStore.redis`, ...) @internal */
export function resolveSessionStoreOption(value) {
    if (value === undefined)
        return undefined;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw optionError('sessionStore', 'must be an object: { redis: url | client, prefix? }');
    }
    refuseUnknownKeys(value, KNOWN, 'sessionStore');
    const o = value;
    const redis = o.redis;
    if (typeof redis === 'string') {
        let url;
        try {
            url = new URL(redis);
        }
        catch {
            throw optionError('sessionStore.redis', 'not a valid URL');
        }
        if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
            throw optionError('sessionStore.redis', 'expected a redis:// or rediss:// URL');
        }
    }
    else {
        const c = redis;
        if (typeof c !== 'object' || c === null || typeof c.eval !== 'function' || typeof c.status !== 'string') {
            throw optionError('sessionStore.redis', 'expected a redis:// URL or an ioredis Redis or Cluster');
        }
    }
    if (o.prefix !== undefined && typeof o.prefix !== 'string')
        throw optionError('sessionStore.prefix', 'must be a string');
    const store = { redis: o.redis };
    if (o.prefix !== undefined)
        store.prefix = o.prefix;
    return store;
}
