/**
 * `agent-pep verify-permit --consume --redis`: the line a user sees when the Redis replay store cannot
 * be made (CONTRACT.md section 11: a usage error names what to do in one line).
 */
import { describe, expect, it } from 'vitest';
import { redisStoreProblem } from '../../../src/cli/verify-permit.js';

describe('redisStoreProblem', () => {
  it('names the package to install when ioredis is missing, never the path Node reports', () => {
    const missing = Object.assign(
      new Error("Cannot find package 'ioredis' imported from /home/u/app/node_modules/agent-pep/dist/replay/redis.js"),
      { code: 'ERR_MODULE_NOT_FOUND' },
    );
    const line = redisStoreProblem(missing);
    expect(line).toBe('--redis needs the package ioredis (an optional peer dependency): npm install ioredis');
    expect(line).not.toContain('/home/u');
  });

  it('keeps any other error as it is, and never throws on a value that is not an Error', () => {
    expect(redisStoreProblem(new Error('boom'))).toBe('cannot use the Redis replay store: boom');
    const other = Object.assign(new Error("Cannot find package 'left-pad'"), { code: 'ERR_MODULE_NOT_FOUND' });
    expect(redisStoreProblem(other)).toBe("cannot use the Redis replay store: Cannot find package 'left-pad'");
    expect(redisStoreProblem(null)).toBe('cannot use the Redis replay store: unknown error');
    expect(redisStoreProblem('x')).toBe('cannot use the Redis replay store: unknown error');
  });
});
