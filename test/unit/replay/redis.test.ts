/**
 * createRedisReplayStore validates its options before it connects: every bad option is a TypeError
 * whose `err.option` names its path, and unknown keys are refused (CONTRACT.md section 2). No Redis is
 * needed: a refused option never opens a connection. (Claims against a real Redis:
 * test/integration/replay/redis.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { createRedisReplayStore } from '../../../src/replay/redis.js';
import { optionOf } from '../../support/options.js';

const URL_OK = 'redis://127.0.0.1:1';
const optionFor = (options: Record<string, unknown>): unknown =>
  optionOf(() => createRedisReplayStore(options as never));

describe('createRedisReplayStore: each option rule names its path in err.option', () => {
  it('options that are not an object: (options)', () => {
    expect(optionOf(() => createRedisReplayStore(null as never))).toBe('(options)');
  });

  it('an unknown key (prefx, a typo of prefix): prefx', () => {
    expect(optionFor({ url: URL_OK, prefx: 'a:' })).toBe('prefx');
  });

  it('neither url nor client: url', () => {
    expect(optionFor({})).toBe('url');
  });

  it.each([
    ['not a URL', 'not a url'],
    ['an http URL', 'http://127.0.0.1:6379'],
  ])('url %s: url', (_label, url) => {
    expect(optionFor({ url })).toBe('url');
  });

  it.each([
    ['an object without eval', {}],
    ['a string', 'redis'],
  ])('client %s: client', (_label, client) => {
    expect(optionFor({ client })).toBe('client');
  });

  it('prefix not a string: prefix', () => {
    expect(optionFor({ url: URL_OK, prefix: 1 })).toBe('prefix');
  });

  it('clockToleranceSec not an integer from 0 to 300: clockToleranceSec', () => {
    for (const v of [-1, 1.5, Number.NaN, 301, '5']) {
      expect(optionFor({ url: URL_OK, clockToleranceSec: v }), String(v)).toBe('clockToleranceSec');
    }
  });

  it('a Redis Cluster client with a prefix without a hash tag: prefix (the epoch and the claims must share a node)', () => {
    const cluster = { isCluster: true, status: 'ready', eval: () => Promise.resolve('OK') };
    expect(optionFor({ client: cluster })).toBe('prefix');
    expect(optionFor({ client: cluster, prefix: 'svc:{}:' })).toBe('prefix');
    expect(() => createRedisReplayStore({ client: cluster as never, prefix: '{svc}:permit:' })).not.toThrow();
  });

  it.each(['commandTimeoutMs', 'connectTimeoutMs'])('%s 0, 1.5, NaN or past 600000: itself', (key) => {
    for (const v of [0, 1.5, Number.NaN, 600_001, '100'])
      expect(optionFor({ url: URL_OK, [key]: v }), String(v)).toBe(key);
  });
});
