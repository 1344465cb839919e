/**
 * The client's own pool comes from undici's Pool module, not undici's index (src/transport/pool.ts,
 * issue 30): it must be the very class the index exports, so that nothing differs but what loads.
 * Should undici move the module, this fails first (the client still works: it falls back to the index).
 */
import { createRequire } from 'node:module';
import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { POOL_MODULE, poolClass } from '../../../src/transport/pool.js';

describe('poolClass', () => {
  it("is undici's own Pool, loaded from its module", () => {
    expect(poolClass()).toBe(Pool);
    expect(createRequire(import.meta.url)(POOL_MODULE)).toBe(Pool);
  });

  it('has what the transport uses without the rest of undici: dispatch, destroy, destroyed', async () => {
    const pool = new (poolClass())('http://127.0.0.1:9');
    expect(typeof pool.dispatch).toBe('function');
    expect(pool.destroyed).toBe(false);
    await pool.destroy();
    expect(pool.destroyed).toBe(true);
  });
});
