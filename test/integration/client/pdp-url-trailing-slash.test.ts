/**
 * A trailing `/` in `pdpUrl` changes nothing (issue 43, item 7; src/internal/url.ts): decisions go to
 * `/api/policy/authorize` (AuthZEN: `/access/v1/evaluation`), never `//...`.
 */
import { describe, expect, it } from 'vitest';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp();

describe('pdpUrl with trailing slashes', () => {
  it.each(['/', '//', '/pdp/'])('pdpUrl + %s: the decision path has no double slash', async (suffix) => {
    const d = await fake.clients.client({ pdpUrl: `${fake.pdp.url}${suffix}` }).checkInput('hi');
    expect(d.verdict).toBe('ALLOW');
    const expected = suffix === '/pdp/' ? '/pdp/api/policy/authorize' : '/api/policy/authorize';
    expect(fake.pdp.received[0]?.path).toBe(expected);
  });

  it('AuthZEN: the evaluation path has no double slash', async () => {
    fake.pdp.handler = (_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ decision: true }));
    const pep = fake.clients.client({ pdpUrl: `${fake.pdp.url}/`, protocol: 'authzen' });
    expect((await pep.checkInput('hi')).verdict).toBe('ALLOW');
    expect(fake.pdp.received[0]?.path).toBe('/access/v1/evaluation');
  });
});
