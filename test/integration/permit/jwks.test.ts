/**
 * Permit keys from a JWKS URL, against a real HTTP server on 127.0.0.1 (src/permit/keys.ts):
 * fetched lazily and cached, bounded in time, refetched for an unknown kid at most once per cooldown,
 * and after a failed fetch at most once a second (CONTRACT.md section 4).
 */
import { createServer, type Server } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PermitVerificationError } from '../../../src/errors.js';
import type { PermitVerifierOptions } from '../../../src/permit/verifier.js';
import { close, listen } from '../../support/http.js';
import { ARGS, createPermitKit, type MintOptions, type PermitKit, permitCodeOf, TOOL } from '../../support/permits.js';

let kit: PermitKit;
beforeAll(async () => {
  kit = await createPermitKit();
});
const mint = (o?: MintOptions): Promise<string> => kit.mint(o);
const verifier = (extra: Partial<PermitVerifierOptions> = {}) => kit.verifier(extra);

/** Moves this process's clock (`Date.now`, which jose's cache and the verifier read) forward by `ms`. */
function clockAhead(ms: number): void {
  const realNow = Date.now.bind(Date);
  vi.spyOn(Date, 'now').mockImplementation(() => realNow() + ms);
}
afterEach(() => {
  vi.restoreAllMocks();
});

describe('the alg allow-list comes before the key source', () => {
  it('the alg is refused before any key lookup', async () => {
    let fetched = 0;
    const server = createServer((_req, res) => {
      fetched++;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(kit.jwks));
    });
    const url = await listen(server);
    try {
      const v = verifier({ keys: `${url}/jwks.json` });
      const permit = await mint({
        header: { alg: 'HS256' },
        key: new TextEncoder().encode('secret-secret-secret-secret-32b!'),
      });
      expect(await permitCodeOf(v.verify(permit, { tool: TOOL, args: ARGS }))).toBe('permit_alg_not_allowed');
      expect(fetched).toBe(0);
    } finally {
      await close(server);
    }
  });
});

describe('createPermitVerifier: keys from a JWKS URL', () => {
  let server: Server;
  let base: string;
  let fetches = 0;
  let mode: 'ok' | 'hang' | 'status' | 'garbage' | 'trickle' = 'ok';

  beforeAll(async () => {
    server = createServer((req, res) => {
      fetches++;
      if (req.url !== '/.well-known/jwks.json') return void res.writeHead(404).end();
      if (mode === 'hang') return; // never answers
      if (mode === 'status') return void res.writeHead(500).end();
      if (mode === 'garbage')
        return void res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys": nope');
      if (mode === 'trickle') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"keys":[');
        return; // the body never ends
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(kit.jwks));
    });
    base = await listen(server);
  });
  afterAll(() => close(server));

  it('verifies with keys fetched from the URL (string or URL), cached across verifies', async () => {
    mode = 'ok';
    fetches = 0;
    const v = verifier({ keys: `${base}/.well-known/jwks.json` });
    await expect(v.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    await expect(v.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    expect(fetches).toBe(1);
    const v2 = verifier({ keys: new URL(`${base}/.well-known/jwks.json`) });
    await expect(v2.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
  });

  it('a flood of unknown kids refetches the key set at most once per cooldown (30 s by default)', async () => {
    mode = 'ok';
    const v = verifier({ keys: `${base}/.well-known/jwks.json` });
    await v.verify(await mint(), { tool: TOOL, args: ARGS });
    fetches = 0;
    for (let i = 0; i < 50; i++) {
      expect(
        await permitCodeOf(v.verify(await mint({ header: { kid: `nope-${i}` } }), { tool: TOOL, args: ARGS })),
      ).toBe('permit_signature_invalid');
    }
    expect(fetches).toBe(0); // within the cooldown: answered from the cached key set
    clockAhead(29_000);
    expect(
      await permitCodeOf(v.verify(await mint({ header: { kid: 'still-cool' } }), { tool: TOOL, args: ARGS })),
    ).toBe('permit_signature_invalid');
    expect(fetches).toBe(0);
    vi.restoreAllMocks();
    clockAhead(30_500);
    const flood = await Promise.all(
      Array.from({ length: 50 }, async (_, i) =>
        permitCodeOf(v.verify(await mint({ header: { kid: `late-${i}` } }), { tool: TOOL, args: ARGS })),
      ),
    );
    expect(new Set(flood)).toEqual(new Set(['permit_signature_invalid']));
    expect(fetches).toBe(1); // past the cooldown: one refetch for the whole flood
  });

  it.each(['hang', 'trickle'] as const)('JWKS URL %s: permit_keys_unavailable within a bounded time', async (m) => {
    mode = m;
    const v = verifier({ keys: `${base}/.well-known/jwks.json`, jwksTimeoutMs: 300 });
    const started = Date.now();
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it.each(['status', 'garbage'] as const)('JWKS URL answering %s: permit_keys_unavailable', async (m) => {
    mode = m;
    const v = verifier({ keys: `${base}/.well-known/jwks.json` });
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
  });

  it('a wrong path (404): permit_keys_unavailable', async () => {
    mode = 'ok';
    const v = verifier({ keys: `${base}/nope.json` });
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
  });

  it('a refused key fetch names the JWKS URL (origin and path, no query) and what went wrong, so a wrong URL is found', async () => {
    mode = 'ok';
    const v = verifier({ keys: `${base}//.well-known/jwks.json?token=s3cret` });
    const err = await v.verify(await mint(), { tool: TOOL, args: ARGS }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PermitVerificationError);
    expect((err as PermitVerificationError).code).toBe('permit_keys_unavailable');
    expect((err as Error).message).toContain(`the JWKS at ${base}//.well-known/jwks.json could not be fetched`);
    expect((err as Error).message).toMatch(/\(.*200.*\)/);
    expect((err as Error).message).not.toContain('s3cret');
  });

  it('JWKS URL down (closed port): permit_keys_unavailable within a bounded time', async () => {
    const s = createServer();
    const url = await listen(s);
    await close(s);
    const v = verifier({ keys: `${url}/.well-known/jwks.json` });
    const started = Date.now();
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a failed key fetch does not burn the jti', async () => {
    const claim = vi.fn(async () => true);
    mode = 'status';
    const v = verifier({ keys: `${base}/.well-known/jwks.json`, replayStore: { claim } });
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
    expect(claim).not.toHaveBeenCalled();
  });
});

describe('a failing JWKS endpoint is fetched at most once a second', () => {
  let server: Server;
  let url: string;
  let fetches = 0;
  let failing = true;
  afterEach(() => close(server));

  async function start(): Promise<void> {
    fetches = 0;
    failing = true;
    server = createServer((_req, res) => {
      fetches++;
      if (failing) return void res.writeHead(500).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(kit.jwks));
    });
    url = `${await listen(server)}/.well-known/jwks.json`;
  }

  it('50 verifications against a 500: all permit_keys_unavailable, at most 2 fetches; after it recovers and a second has passed, one succeeds', async () => {
    await start();
    const v = verifier({ keys: url });
    const permits = await Promise.all(Array.from({ length: 50 }, () => mint()));
    const started = Date.now();
    const codes: string[] = [];
    for (const p of permits.slice(0, 25)) codes.push(await permitCodeOf(v.verify(p, { tool: TOOL, args: ARGS })));
    codes.push(
      ...(await Promise.all(permits.slice(25).map((p) => permitCodeOf(v.verify(p, { tool: TOOL, args: ARGS }))))),
    );
    const elapsed = Date.now() - started;
    expect(new Set(codes)).toEqual(new Set(['permit_keys_unavailable']));
    expect(fetches).toBeGreaterThanOrEqual(1);
    // at most one fetch a second: 2 allows for the 50 verifications straddling a second boundary
    expect(fetches).toBeLessThanOrEqual(1 + Math.floor(elapsed / 1000));
    expect(fetches).toBeLessThanOrEqual(2);

    failing = false;
    clockAhead(1000 + elapsed); // a second has passed since the last fetch
    await expect(v.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toMatchObject({ tool: TOOL });
  });

  it('within the second after a failure, a lookup is refused without a fetch even when the endpoint is back', async () => {
    await start();
    const realNow = Date.now.bind(Date);
    let offset = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + offset);
    const v = verifier({ keys: url });
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
    expect(fetches).toBe(1);
    failing = false;
    offset = 900;
    expect(await permitCodeOf(v.verify(await mint(), { tool: TOOL, args: ARGS }))).toBe('permit_keys_unavailable');
    expect(fetches).toBe(1);
    offset = 1000;
    await expect(v.verify(await mint(), { tool: TOOL, args: ARGS })).resolves.toBeDefined();
    expect(fetches).toBe(2);
  });
});

describe('a key set is read only up to 256 KiB (KEY_SOURCE_DEFAULTS.maxJwksBytes)', () => {
  /** A key set of the right key after `decoys` copies of it under other kids, as JSON bytes. */
  const keySet = (decoys: number): Buffer => {
    const right = kit.jwks.keys[0] as Record<string, unknown>;
    const keys = Array.from({ length: decoys }, (_, i) => ({ ...right, kid: `decoy-${i}` }));
    return Buffer.from(JSON.stringify({ keys: [...keys, right] }));
  };
  const serve = async (body: Buffer, chunked: boolean): Promise<{ url: string; server: Server }> => {
    const server = createServer((_req, res) => {
      res.writeHead(
        200,
        chunked
          ? { 'content-type': 'application/json' }
          : {
              'content-type': 'application/json',
              'content-length': String(body.length),
            },
      );
      if (!chunked) return void res.end(body);
      // in 16 KiB pieces, without a content-length
      for (let at = 0; at < body.length; at += 16_384) res.write(body.subarray(at, at + 16_384));
      res.end();
    });
    return { url: await listen(server), server };
  };

  it.each([
    ['with a content-length', false],
    ['chunked, without one', true],
  ])('a larger key set (%s) is permit_keys_unavailable, not read whole', async (_n, chunked) => {
    const body = keySet(3000);
    expect(body.length).toBeGreaterThan(256 * 1024);
    const { url, server } = await serve(body, chunked);
    try {
      expect(
        await permitCodeOf(verifier({ keys: `${url}/jwks.json` }).verify(await mint(), { tool: TOOL, args: ARGS })),
      ).toBe('permit_keys_unavailable');
    } finally {
      await close(server);
    }
  });

  it('a key set just under the cap verifies', async () => {
    const body = keySet(2000);
    expect(body.length).toBeLessThan(256 * 1024);
    const { url, server } = await serve(body, true);
    try {
      const claims = await verifier({ keys: `${url}/jwks.json` }).verify(await mint(), { tool: TOOL, args: ARGS });
      expect(typeof claims.jti).toBe('string');
    } finally {
      await close(server);
    }
  });
});
