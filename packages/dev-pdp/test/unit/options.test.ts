import { describe, expect, test } from 'vitest';
import { optionOf } from '../../../../test/support/options.js';
import { DEV_PDP_DEFAULTS } from '../../src/defaults.js';
import { validateFault } from '../../src/faults.js';
import { resolveDevPdpOptions } from '../../src/options.js';

const POLICY = { agents: ['a'], latches: [] };

describe('startDevPdp options: every TypeError names its path in err.option', () => {
  test.each<[string, Record<string, unknown>]>([
    ['faults', { faults: { kind: 'hang' } }],
    ['replayStore', { replayStore: {} }],
    ['policy', { policy: undefined }],
    ['host', { host: '' }],
    ['port', { port: 70000 }],
    ['port', { port: 1.5 }],
    ['apiKey', { apiKey: '' }],
    ['reviewerApiKey', { reviewerApiKey: 7 }],
    ['reviewerApiKey', { apiKey: 'same', reviewerApiKey: 'same' }],
    ['audience', { audience: '' }],
    ['permitTtlSec', { permitTtlSec: 301 }],
    ['permitTtlSec', { permitTtlSec: 0 }],
    ['evidencePath', { evidencePath: '' }],
    ['maxBodyBytes', { maxBodyBytes: 10 }],
    ['headersTimeoutMs', { headersTimeoutMs: 0 }],
    ['headersTimeoutMs', { headersTimeoutMs: 2 ** 31 }],
    ['requestTimeoutMs', { headersTimeoutMs: 5000, requestTimeoutMs: 1000 }],
    ['keepAliveTimeoutMs', { keepAliveTimeoutMs: -1 }],
    ['onDecision', { onDecision: 'yes' }],
    ['log', { log: true }],
  ])('%s', (option, extra) => {
    expect(optionOf(() => resolveDevPdpOptions({ policy: POLICY, ...extra }))).toBe(option);
  });

  test('not an object', () => {
    expect(optionOf(() => resolveDevPdpOptions(null))).toBe('options');
  });

  test('defaults come from the one defaults object', () => {
    const o = resolveDevPdpOptions({ policy: POLICY });
    expect(o).toMatchObject({
      host: DEV_PDP_DEFAULTS.host,
      port: DEV_PDP_DEFAULTS.port,
      audience: DEV_PDP_DEFAULTS.audience,
      permitTtlSec: DEV_PDP_DEFAULTS.permitTtlSec,
      maxBodyBytes: DEV_PDP_DEFAULTS.maxBodyBytes,
      headersTimeoutMs: DEV_PDP_DEFAULTS.headersTimeoutMs,
      requestTimeoutMs: DEV_PDP_DEFAULTS.requestTimeoutMs,
      keepAliveTimeoutMs: DEV_PDP_DEFAULTS.keepAliveTimeoutMs,
    });
    expect(Object.isFrozen(DEV_PDP_DEFAULTS)).toBe(true);
  });
});

describe('setFault: unknown keys and bad values name their path', () => {
  test.each<[string, unknown]>([
    ['fault', 'hang'],
    ['fault.kind', { kind: 'explode' }],
    ['fault.status', { kind: 'status', status: 99 }],
    ['fault.bytesPerSecond', { kind: 'slow', bytesPerSecond: 0 }],
    ['fault.status', { kind: 'hang', status: 500 }],
    ['fault.bytesPersecond', { kind: 'slow', bytesPersecond: 10 }],
  ])('%s', (option, fault) => {
    expect(optionOf(() => validateFault(fault))).toBe(option);
  });
});

describe('review options (console, approvalTtlSec, escalationTtlSec, notifyUrl)', () => {
  const base = { policy: { agents: ['a'], latches: [] } };

  test('defaults: 900 s approvals, 3600 s escalations, the console on exactly when there is a reviewer key', () => {
    expect(resolveDevPdpOptions(base)).toMatchObject({ console: false, approvalTtlSec: 900, escalationTtlSec: 3600 });
    expect(resolveDevPdpOptions({ ...base, reviewerApiKey: 'r' })).toMatchObject({ console: true });
    expect(resolveDevPdpOptions({ ...base, reviewerApiKey: 'r', console: false })).toMatchObject({ console: false });
  });

  test.each([
    ['console', 'yes'],
    ['approvalTtlSec', 0],
    ['approvalTtlSec', 1.5],
    ['approvalTtlSec', 604_801],
    ['escalationTtlSec', '60'],
    ['notifyUrl', 'ftp://example.test/'],
    ['notifyUrl', 'not a url'],
  ])('refuses %s = %j, naming it', (option, value) => {
    expect(() => resolveDevPdpOptions({ ...base, [option]: value })).toThrow(expect.objectContaining({ option }));
  });
});
