/**
 * The cause is where the reader looks (issue 43, item 7): a guard helper's error names the detail of
 * a synthesized BLOCK in `err.message` (the HTTP status and URL of a wrong API key or path, which
 * permit claim failed and what was expected), never in `toolMessage`, which the model reads.
 */
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { actionHash, type PolicyEnforcementError } from '../../../src/index.js';
import { answer } from '../../support/fake-pdp.js';
import { useFakePdp } from '../../support/fake-pdp-suite.js';

const fake = useFakePdp();
const { clients } = fake;
let jwk: Record<string, unknown>;
let privateKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

beforeAll(async () => {
  const pair = await generateKeyPair('EdDSA');
  privateKey = pair.privateKey;
  jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'EdDSA' };
});

async function caught(p: Promise<unknown>): Promise<PolicyEnforcementError> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: PolicyEnforcementError) => e,
  );
}

describe('err.message carries the cause of a synthesized BLOCK', () => {
  it('a PDP that refuses the API key: HTTP 401 and the URL in err.message, only the code in toolMessage', async () => {
    fake.pdp.handler = (_req, res) => answer(res, { error: 'unauthorized' }, 401);
    const err = await caught(clients.client({ apiKey: 'wrong-key' }).guardText('input', 'hi'));
    expect(err.code).toBe('pdp_status');
    expect(err.message).toContain('HTTP 401');
    expect(err.message).toContain(`${fake.pdp.url}/api/policy/authorize`);
    expect(err.message).not.toContain('wrong-key');
    expect(err.toolMessage).not.toContain('401');
    expect(err.toolMessage).toContain('(pdp_status)');
  });

  it("a permit from another issuer: permit_claim_invalid names claim 'iss' and the issuer expected", async () => {
    const now = Math.floor(Date.now() / 1000);
    fake.pdp.handler = async (req, res) => {
      const body = req.body as { requestId: string; args: Record<string, unknown> };
      const permit = await new SignJWT({
        iss: 'http://other-pdp',
        aud: 'svc',
        sub: 'support-ai',
        sid: 'sess_1',
        jti: `j${Math.random()}`,
        iat: now,
        exp: now + 60,
        tool: 'lookup',
        act_hash: actionHash('lookup', body.args),
      })
        .setProtectedHeader({ alg: 'EdDSA', kid: 'k1', typ: 'permit+jwt' })
        .sign(privateKey);
      answer(res, { verdict: 'ALLOW', requestId: body.requestId, permitId: permit });
    };
    const pep = clients.client({ permits: { keys: { keys: [jwk] }, issuer: 'http://expected-pdp' } });
    const err = await caught(pep.guardTool('lookup', async () => 'ran')({ id: 1 }));
    expect(err.code).toBe('permit_invalid');
    expect(err.message).toContain('permit_claim_invalid');
    expect(err.message).toContain("claim 'iss'");
    expect(err.message).toContain('http://expected-pdp');
    expect(err.toolMessage).not.toContain('iss');
  });

  it('a PDP BLOCK reads as before: its reason, no detail added', async () => {
    fake.pdp.handler = (req, res) =>
      answer(res, { verdict: 'BLOCK', reason: 'no', requestId: (req.body as { requestId: string }).requestId });
    const err = await caught(clients.client().guardText('input', 'hi'));
    expect(err.code).toBe('blocked');
    expect(err.message).toMatch(/^input blocked by policy: no \(request /);
  });
});
