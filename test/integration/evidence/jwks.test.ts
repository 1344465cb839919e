/**
 * verifyEvidence with a JWKS URL, against a real HTTP server on 127.0.0.1: the fetch is bounded by the
 * permit key source's deadline (1500 ms, not jose's 5 s), and a key set that cannot be had is
 * `keys_unavailable`, never a pass.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyEvidence } from '../../../src/evidence/verify.js';
import { createEvidenceSigner, type EvidenceSigner } from '../../support/evidence.js';
import { close, listen } from '../../support/http.js';

let signer: EvidenceSigner;
beforeAll(async () => {
  signer = await createEvidenceSigner();
});

describe('verifyEvidence: keys from a JWKS URL', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server) await close(server);
    server = undefined;
  });

  it('verifies with the keys the URL serves', async () => {
    server = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(signer.jwks)),
    );
    const url = await listen(server);
    await expect(verifyEvidence(await signer.log(2), { keys: `${url}/jwks.json` })).resolves.toEqual({
      ok: true,
      count: 2,
    });
  });

  it('a JWKS URL that never answers: keys_unavailable within the 1500 ms fetch deadline (not jose’s 5 s)', async () => {
    server = createServer(() => {}); // accepts, never answers
    const url = await listen(server);
    const log = await signer.log(1);
    const started = Date.now();
    await expect(verifyEvidence(log, { keys: `${url}/jwks.json` })).resolves.toEqual({
      ok: false,
      index: 0,
      reason: 'keys_unavailable',
    });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('a JWKS URL answering 500: keys_unavailable', async () => {
    server = createServer((_req, res) => res.writeHead(500).end());
    const url = await listen(server);
    await expect(verifyEvidence(await signer.log(1), { keys: `${url}/jwks.json` })).resolves.toEqual({
      ok: false,
      index: 0,
      reason: 'keys_unavailable',
    });
  });
});
