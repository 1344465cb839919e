/**
 * Property: whatever status, headers and body bytes come back, a stage method yields ALLOW or WARN
 * only when the body is a valid, enforceable decision (CONTRACT.md section 3, rules 2-4). The oracle
 * below is written independently of src/ from the contract's words.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPep, type Pep } from '../../src/index.js';
import { type FakePdp, startFakePdp } from '../support/fake-pdp.js';

type Sent = { requestId: string; stage: string };

interface Scripted {
  status: number;
  contentType: string | undefined;
  /** Builds the body bytes from what was asked (so echoes can be right or wrong on purpose). */
  body: (req: { requestId: string; stage: string }) => Buffer;
  xRequestId: 'none' | 'same' | 'other';
}

const KNOWN_STRINGS = ['decisionId', 'reason', 'escalationId', 'transformedContent'];

/** The contract's rules 2-4, for a non-simulated request, as a plain predicate. */
function enforceableAllowOrWarn(
  status: number,
  contentType: string | undefined,
  bytes: Buffer,
  xRequestId: string | undefined,
  sent: { requestId: string; stage: string },
): boolean {
  if (status !== 200) return false;
  if (contentType === undefined) return false;
  const [media, ...params] = contentType.split(';').map((s) => s.trim().toLowerCase());
  if (media !== 'application/json') return false;
  for (const p of params) if (p.startsWith('charset=') && !['charset=utf-8', 'charset=utf8'].includes(p)) return false;
  if (bytes.length > 65536) return false;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return false;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return false;
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  // Duplicate names: re-serializing loses them; compare member counts of the top level only
  // (the generators below only ever duplicate top-level names).
  const topLevelNames = [...text.matchAll(/"((?:[^"\\]|\\.)*)"\s*:/g)].length;
  if (topLevelNames !== countNames(o)) return false;
  if (o.verdict !== 'ALLOW' && o.verdict !== 'WARN') return false;
  for (const k of KNOWN_STRINGS) if (k in o && typeof o[k] !== 'string') return false;
  if ('latches' in o && !(Array.isArray(o.latches) && o.latches.every((x) => typeof x === 'string'))) return false;
  const labels = o.sessionLabels;
  if ('sessionLabels' in o && !(Array.isArray(labels) && labels.every((x) => typeof x === 'string'))) return false;
  if ('permitId' in o && !(typeof o.permitId === 'string' && o.permitId.length > 0)) return false;
  if ('simulated' in o && typeof o.simulated !== 'boolean') return false;
  if ('requestId' in o && o.requestId !== sent.requestId) return false;
  if ('stage' in o && o.stage !== sent.stage) return false;
  if (xRequestId !== undefined && xRequestId !== sent.requestId) return false;
  if (o.simulated === true) return false;
  if ('obligations' in o && !(Array.isArray(o.obligations) && o.obligations.length === 0)) return false;
  if ('error' in o) return false;
  if ('errors' in o && !(Array.isArray(o.errors) && o.errors.length === 0)) return false;
  const ta = o.transformedArgs;
  if ('transformedArgs' in o && (typeof ta !== 'object' || ta === null || Array.isArray(ta))) return false;
  if (sent.stage === 'action') {
    if (!('permitId' in o)) return false;
    if ('transformedContent' in o) return false;
    if ('transformedArgs' in o && o.verdict !== 'WARN') return false;
  } else {
    if ('permitId' in o || 'transformedArgs' in o) return false;
    if (o.verdict === 'WARN' && !('transformedContent' in o)) return false;
    if (o.verdict === 'ALLOW' && 'transformedContent' in o) return false;
  }
  return true;
}

function countNames(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 0;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + countNames(x), 0);
  return Object.entries(v).reduce((n, [, x]) => n + 1 + countNames(x), 0);
}

const anyValue = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
);

/** Decision-shaped objects: plausible fields of the right types, then 0-2 mutations to any value. */
/** Each optional member is present half of the time. */
const half = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> =>
  fc.tuple(fc.boolean(), arb).map(([present, v]) => (present ? v : undefined));
const plausible = fc
  .record({
    verdict: fc.constantFrom('ALLOW', 'WARN', 'BLOCK', 'ESCALATE'),
    permitId: half(fc.constant('permit.jws.x')),
    transformedContent: half(fc.string({ maxLength: 8 })),
    transformedArgs: half(fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 })),
    decisionId: half(fc.string({ maxLength: 8 })),
    reason: half(fc.string({ maxLength: 8 })),
    latches: half(fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 })),
    sessionLabels: half(fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 })),
    escalationId: half(fc.string({ maxLength: 8 })),
    simulated: half(fc.boolean()),
    obligations: half(fc.constant([])),
    errors: half(fc.constant([])),
  })
  .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)));
const FIELDS = [
  'verdict',
  'permitId',
  'transformedContent',
  'transformedArgs',
  'decisionId',
  'reason',
  'latches',
  'sessionLabels',
  'escalationId',
  'simulated',
  'obligations',
  'errors',
  'error',
  'extra',
];
const mutations = fc.array(fc.tuple(fc.constantFrom(...FIELDS), anyValue), { maxLength: 2 });
const decisionLike = fc
  .tuple(plausible, fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: mutations }))
  .map(([d, muts]) => {
    const o: Record<string, unknown> = { ...d };
    for (const [k, v] of muts) o[k] = v;
    return o;
  });

const echo = fc.constantFrom('right', 'right', 'absent', 'absent', 'wrong');

/** A permitting decision shaped for the stage asked about, then 0-1 mutations to any value. */
const enforceableThenMutated = fc
  .tuple(
    fc.constantFrom('ALLOW', 'WARN'),
    fc.string({ maxLength: 8 }),
    fc.oneof({ weight: 2, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: mutations }),
  )
  .map(([verdict, text, muts]) => (req: Sent) => {
    const o: Record<string, unknown> = { verdict, requestId: req.requestId };
    if (req.stage === 'action') {
      o.permitId = 'permit.jws.x';
      if (verdict === 'WARN') o.transformedArgs = { a: 2 };
    } else if (verdict === 'WARN') {
      o.transformedContent = text;
    }
    for (const [k, v] of muts) o[k] = v;
    return Buffer.from(JSON.stringify(o));
  });

const bodyArb: fc.Arbitrary<(req: { requestId: string; stage: string }) => Buffer> = fc.oneof(
  { weight: 3, arbitrary: enforceableThenMutated },
  {
    weight: 6,
    arbitrary: fc.tuple(decisionLike, echo, echo).map(([d, rid, st]) => (req: Sent) => {
      const o: Record<string, unknown> = { ...d };
      if (rid === 'right') o.requestId = req.requestId;
      if (rid === 'wrong') o.requestId = 'x';
      if (st === 'right') o.stage = req.stage;
      if (st === 'wrong') o.stage = 'delivery';
      return Buffer.from(JSON.stringify(o));
    }),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(decisionLike, fc.constantFrom('verdict', 'permitId', 'requestId'))
      .map(([d, dup]) => (req: Sent) => {
        const o = { ...d, requestId: req.requestId } as Record<string, unknown>;
        const text = JSON.stringify(o);
        return Buffer.from(`{"${dup}":"BLOCK",${text.slice(1)}`.replace(',}', '}'));
      }),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => () => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.json().map((j) => () => Buffer.from(j)) },
);

const scripted: fc.Arbitrary<Scripted> = fc.record({
  status: fc.oneof(
    { weight: 5, arbitrary: fc.constant(200) },
    { weight: 1, arbitrary: fc.integer({ min: 200, max: 599 }) },
  ),
  contentType: fc.constantFrom(
    'application/json',
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON',
    'application/json; charset=latin1',
    'text/plain',
    'application/problem+json',
    undefined,
  ),
  body: bodyArb,
  xRequestId: fc.constantFrom('none', 'none', 'same', 'same', 'other'),
});

let pdp: FakePdp;
let pep: Pep;
let current: Scripted;
let expected = false;

beforeAll(async () => {
  pdp = await startFakePdp((req, res) => {
    const sent = { requestId: String(req.body.requestId), stage: String(req.body.stage) };
    const bytes = current.body(sent);
    const headers: Record<string, string> = {};
    if (current.contentType !== undefined) headers['content-type'] = current.contentType;
    const xr = current.xRequestId === 'same' ? sent.requestId : current.xRequestId === 'other' ? 'zzz' : undefined;
    if (xr !== undefined) headers['x-request-id'] = xr;
    expected = enforceableAllowOrWarn(current.status, current.contentType, bytes, xr, sent);
    res.writeHead(current.status, headers);
    res.end(bytes);
  });
  pep = createPep({ pdpUrl: pdp.url, agentId: 'a', session: 's', retries: 0, timeoutMs: 3000 });
});
afterAll(async () => {
  await pep.close();
  await pdp.close();
});

it.each(['action', 'output'])('stage %s: ALLOW or WARN only for a valid, enforceable body', async (stage) => {
  let permitted = 0;
  await fc.assert(
    fc.asyncProperty(scripted, async (s) => {
      current = s;
      expected = false;
      const d = stage === 'action' ? await pep.authorizeAction('t', { a: 1 }) : await pep.checkOutput('x');
      const ok = d.verdict === 'ALLOW' || d.verdict === 'WARN';
      if (ok) permitted++;
      if (ok && !expected) return false;
      if (d.synthesized && d.verdict !== 'BLOCK') return false;
      // The converse too: a valid, enforceable ALLOW/WARN is not refused.
      if (expected && !ok) return false;
      return true;
    }),
    { numRuns: 400 },
  );
  // The generators reach the permitting branch, so the property is not vacuous.
  expect(permitted).toBeGreaterThan(0);
});
