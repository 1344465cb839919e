/**
 * Breaker probe: the dev PDP accepts a request string with an unpaired surrogate in `content` or
 * `session` (it refuses one in `args`, 400), then answers 200 with a body, or signs a permit, that is
 * not I-JSON (RFC 7493 section 2.1). CONTRACT.md section 6: the dev PDP "speaks section 3 exactly";
 * section 3 rule 3: a response must be valid I-JSON. A request it accepts must get an answer the PEP
 * can take; a request it cannot answer in protocol must be a 400 (as it already does for args).
 *
 * The SDK never sends such strings (it answers invalid_request itself), but the dev PDP is the
 * reference PDP for any client. Worse: a lone surrogate in `session` makes the evidence hash
 * (canonicalize refuses lone surrogates) throw after `seq` was already incremented, so the request
 * gets a 500 and every later record sits after a gap: the whole log then fails `verifyEvidence`
 * (`seq_mismatch`) although nobody tampered with it. One unauthenticated-by-default request breaks
 * the evidence log (CONTRACT.md section 6: 400 to a malformed request; verifyEvidence names only
 * records that are edited, missing, out of order or foreign-signed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DevPdp, startDevPdp } from '../../src/index.js';

const POLICY = {
  agents: ['support-ai'],
  latches: [
    {
      id: 'phone-redaction',
      stage: 'output',
      content: '\\b\\d{3}[-.]\\d{3}[-.]\\d{4}\\b',
      verdict: 'WARN',
      redact: '[phone]',
      reason: 'phone numbers are redacted',
    },
  ],
};

let pdp: DevPdp;
beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, log: false });
});
afterAll(async () => {
  await pdp?.close();
});

/** True when some JSON string escape in `text` is an unpaired surrogate. */
function hasLoneSurrogateEscape(text: string): boolean {
  const value = JSON.parse(text) as unknown;
  const walk = (v: unknown): boolean => {
    if (typeof v === 'string') return !v.isWellFormed();
    if (Array.isArray(v)) return v.some(walk);
    if (typeof v === 'object' && v !== null) return Object.entries(v).some(([k, x]) => !k.isWellFormed() || walk(x));
    return false;
  };
  return walk(value);
}

function postRaw(raw: string): Promise<{ status: number; text: string }> {
  return postRawTo(pdp, raw);
}

async function postRawTo(target: DevPdp, raw: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${target.url}/api/policy/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: raw,
    signal: AbortSignal.timeout(5000),
  });
  return { status: res.status, text: await res.text() };
}

describe('dev PDP: unpaired surrogates in an accepted request', () => {
  it('content with a lone surrogate: a 400, or a 200 whose body is I-JSON', async () => {
    const raw =
      '{"agentId":"support-ai","session":"s1","stage":"output","requestId":"r-1","content":"call 555-123-4567 \\ud800"}';
    const reply = await postRaw(raw);
    if (reply.status === 200) expect(hasLoneSurrogateEscape(reply.text), reply.text).toBe(false);
    else expect(reply.status).toBe(400);
  });

  it('session with a lone surrogate: a 400, or a permit whose payload is I-JSON', async () => {
    const raw =
      '{"agentId":"support-ai","session":"s\\udc00","stage":"action","requestId":"r-2","tool":"lookup","args":{}}';
    const reply = await postRaw(raw);
    if (reply.status !== 200) {
      expect(reply.status).toBe(400);
      return;
    }
    expect(hasLoneSurrogateEscape(reply.text)).toBe(false);
    const permit = (JSON.parse(reply.text) as { permitId: string }).permitId;
    const payload = Buffer.from(permit.split('.')[1] as string, 'base64url').toString('utf8');
    expect(hasLoneSurrogateEscape(payload), payload).toBe(false);
  });

  it('a request with a lone surrogate in session does not break the evidence chain for later decisions', async () => {
    const own = await startDevPdp({ policy: POLICY, log: false });
    try {
      const ok = '{"agentId":"support-ai","session":"s1","stage":"input","requestId":"r-a","content":"hello"}';
      const bad = '{"agentId":"support-ai","session":"s\\udc00","stage":"input","requestId":"r-b","content":"hello"}';
      expect((await postRawTo(own, ok)).status).toBe(200);
      await postRawTo(own, bad); // whatever it answers
      expect((await postRawTo(own, ok)).status).toBe(200);
      const { verifyEvidence } = await import('../../../../src/evidence/verify.js');
      expect(await verifyEvidence(own.evidence(), { keys: own.jwks })).toMatchObject({ ok: true });
    } finally {
      await own.close();
    }
  });
});
