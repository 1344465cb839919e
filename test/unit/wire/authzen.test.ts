/**
 * The AuthZEN 1.0 wire without a network (CONTRACT.md section 9): the mapping of a request, of an
 * answer (a boolean `decision`, the agent-pep profile), of a batch answer, and the discovery check.
 */
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import type { SentRequest } from '../../../src/enforce.js';
import { AttemptFailure } from '../../../src/internal/failure.js';
import { canonicalSnapshotJson } from '../../../src/permit/hash.js';
import type { AuthorizeRequest } from '../../../src/wire/agent-pep.js';
import {
  DiscardedConfiguration,
  defaultEndpoints,
  encodeEvaluation,
  encodeEvaluations,
  mapAnswer,
  parseConfiguration,
  parseEvaluations,
  toEvaluation,
} from '../../../src/wire/authzen.js';

const enc = (v: unknown): Uint8Array => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
    return undefined;
  } catch (err) {
    return err instanceof AttemptFailure ? err.code : err instanceof DiscardedConfiguration ? 'discarded' : 'other';
  }
};

function call(req: Partial<AuthorizeRequest>, tool?: string): { req: AuthorizeRequest; sent: SentRequest } {
  const full: AuthorizeRequest = { agentId: 'a', session: 's', stage: 'action', requestId: 'r1', ...req };
  const sent: SentRequest = {
    stage: full.stage,
    requestId: full.requestId,
    agentId: 'a',
    session: 's',
    simulated: false,
  };
  if (tool !== undefined) sent.tool = tool;
  return { req: full, sent };
}

describe('toEvaluation', () => {
  it('maps an action to `call` on a `tool` named by its normalized name, args in properties', () => {
    expect(toEvaluation(call({ tool: 'Refund-Payment', args: { amount: 5 } }, 'refund_payment'))).toEqual({
      subject: { type: 'agent', id: 'a' },
      action: { name: 'call' },
      resource: { type: 'tool', id: 'refund_payment', properties: { args: { amount: 5 } } },
      context: { session: 's', requestId: 'r1' },
    });
  });

  it('maps a text stage to its name on `content` whose id is the requestId; simulated only when true', () => {
    expect(toEvaluation(call({ stage: 'output', content: 'hi', simulated: true }))).toEqual({
      subject: { type: 'agent', id: 'a' },
      action: { name: 'output' },
      resource: { type: 'content', id: 'r1', properties: { content: 'hi' } },
      context: { session: 's', requestId: 'r1', simulated: true },
    });
  });

  it('an evaluations body carries execute_all and every item whole', () => {
    const body = JSON.parse(
      encodeEvaluations([call({ tool: 'a', args: {} }, 'a'), call({ tool: 'b', args: {}, requestId: 'r2' }, 'b')]),
    );
    expect(body.options).toEqual({ evaluations_semantic: 'execute_all' });
    expect(body.evaluations.map((e: { context: { requestId: string } }) => e.context.requestId)).toEqual(['r1', 'r2']);
    expect(Object.keys(body)).toEqual(['options', 'evaluations']);
  });

  it('an action item carries the args as the RFC 8785 text the client hashed: the same evaluation as toEvaluation', () => {
    const args = { z: [1, { b: 'x"y', a: null }], a: -0, m: 1e21, '\n': true };
    for (const simulated of [false, true]) {
      const c = call(
        simulated ? { tool: 'Refund-Payment', args, simulated } : { tool: 'Refund-Payment', args },
        'refund_payment',
      );
      c.sent.args = args;
      c.sent.argsJson = canonicalSnapshotJson(args);
      const one = encodeEvaluation(c);
      const wire = (v: unknown) => JSON.parse(JSON.stringify(v));
      expect(JSON.parse(one)).toEqual(wire(toEvaluation(c)));
      expect(one).toContain(`"args":${canonicalize(args)}`);
      const batch = JSON.parse(encodeEvaluations([c, c]));
      expect(batch.evaluations).toEqual(wire([toEvaluation(c), toEvaluation(c)]));
    }
  });
});

describe('encodeEvaluation: an action item as JSON.stringify writes toEvaluation', () => {
  it('the same text, member for member, whatever the agent, session and request id (quotes, unicode, switching agents)', () => {
    const args = { a: 1, b: ['x', { c: null }] }; // keys already in RFC 8785 order
    for (const agentId of ['a', 'agent "b"', 'a', 'ü\\n']) {
      for (const simulated of [false, true]) {
        const c = call(
          {
            agentId,
            session: 'sess "q" \u2028',
            requestId: 'r\\1',
            tool: 'T',
            args,
            ...(simulated ? { simulated } : {}),
          },
          't',
        );
        c.sent.argsJson = canonicalSnapshotJson(args);
        expect(encodeEvaluation(c)).toBe(JSON.stringify(toEvaluation(c)));
      }
    }
  });

  it('the same text for a session or request id at every edge of plain ASCII (written without JSON.stringify)', () => {
    const ids = [
      '',
      ' ',
      '!#[]~',
      '0b7f0f4e-6c1f-4f1a-9c7e-3c1a3c5a9e11',
      'a"b',
      'a\\b',
      '\u001f',
      '\u007f',
      '\t',
      '\u0080',
      '\u2028',
      '\ud800',
      '\ud83d\ude00',
    ];
    for (const id of ids) {
      const c = call({ session: id, requestId: id, tool: 'T', args: {} }, 't');
      c.sent.argsJson = '{}';
      expect(encodeEvaluation(c)).toBe(JSON.stringify(toEvaluation(c)));
    }
  });
});

describe('mapAnswer', () => {
  it.each([
    [{ decision: true }, 'ALLOW'],
    [{ decision: false }, 'BLOCK'],
    [{ decision: true, context: { verdict: 'ALLOW' } }, 'ALLOW'],
    [{ decision: true, context: { verdict: 'WARN' } }, 'WARN'],
    [{ decision: false, context: { verdict: 'BLOCK' } }, 'BLOCK'],
    [{ decision: false, context: { verdict: 'ESCALATE' } }, 'ESCALATE'],
  ])('%j is %s', (answer, verdict) => {
    expect(mapAnswer(answer).response.verdict).toBe(verdict);
  });

  it.each([
    [{ decision: true, context: { verdict: 'BLOCK' } }, 'ambiguous_decision'],
    [{ decision: true, context: { verdict: 'ESCALATE' } }, 'ambiguous_decision'],
    [{ decision: false, context: { verdict: 'ALLOW' } }, 'ambiguous_decision'],
    [{ decision: false, context: { verdict: 'WARN' } }, 'ambiguous_decision'],
    [{ decision: 'true' }, 'invalid_response'],
    [{ decision: 0 }, 'invalid_response'],
    [{ context: {} }, 'invalid_response'],
    [{ decision: true, context: [] }, 'invalid_response'],
    [{ decision: true, context: { transformedArgs: [1] } }, 'invalid_response'],
    [{ decision: true, context: { permitId: '' } }, 'invalid_response'],
    [{ decision: true, context: { escalationId: 1 } }, 'invalid_response'],
    [{ decision: true, context: { sessionLabels: 'untrusted' } }, 'invalid_response'],
    [{ decision: false, context: { sessionLabels: [1] } }, 'invalid_response'],
    [{ decision: true, context: { grants: 'pay' } }, 'invalid_response'],
  ])('%j fails with %s', (answer, code) => {
    expect(codeOf(() => mapAnswer(answer))).toBe(code);
  });

  it('carries the profile over and reads reasons only when they are strings', () => {
    const { response } = mapAnswer({
      decision: true,
      context: {
        verdict: 'WARN',
        permitId: 'p',
        transformedArgs: { a: 1 },
        decisionId: 'd',
        latches: ['l1'],
        sessionLabels: ['untrusted'],
        grants: ['pay'],
        reason_admin: { en: 'x' },
        reason_user: 'for you',
        extra: 1,
      },
    });
    expect(response).toEqual({
      verdict: 'WARN',
      permitId: 'p',
      transformedArgs: { a: 1 },
      decisionId: 'd',
      latches: ['l1'],
      sessionLabels: ['untrusted'],
      grants: ['pay'],
      reason: 'for you',
    });
  });

  it('hands an error in the item or its context to the rule-4 check', () => {
    expect(mapAnswer({ decision: false, context: { error: { code: 'x' } } }).raw).toHaveProperty('error');
    expect(mapAnswer({ decision: true, error: null }).raw).toHaveProperty('error');
    expect(mapAnswer({ decision: true, context: { errors: ['e'] } }).raw.errors).toEqual(['e']);
    expect(mapAnswer({ decision: true, context: { errors: [] } }).raw).toEqual({});
  });
});

describe('parseEvaluations', () => {
  it('maps each item on its own: one that fails is its failure, the others stand', () => {
    const out = parseEvaluations(enc({ evaluations: [{ decision: true }, { decision: 'no' }] }), 2);
    expect(out[0]).not.toBeInstanceOf(AttemptFailure);
    expect((out[1] as AttemptFailure).code).toBe('invalid_response');
  });

  it('a count that differs is ambiguous_decision; a body that is not an evaluations answer is invalid_response', () => {
    expect(codeOf(() => parseEvaluations(enc({ evaluations: [{ decision: true }] }), 2))).toBe('ambiguous_decision');
    expect(codeOf(() => parseEvaluations(enc({ decision: true }), 1))).toBe('invalid_response');
    expect(codeOf(() => parseEvaluations(enc('{"evaluations":[],"evaluations":[]}'), 0))).toBe('invalid_response');
  });

  it('an answer that reports an error beside its evaluations is ambiguous_decision as a whole (section 3, rule 4)', () => {
    const two = [{ decision: true }, { decision: true }];
    expect(codeOf(() => parseEvaluations(enc({ error: { code: 'internal' }, evaluations: two }), 2))).toBe(
      'ambiguous_decision',
    );
    expect(codeOf(() => parseEvaluations(enc({ error: null, evaluations: two }), 2))).toBe('ambiguous_decision');
    expect(codeOf(() => parseEvaluations(enc({ errors: ['down'], evaluations: two }), 2))).toBe('ambiguous_decision');
    expect(codeOf(() => parseEvaluations(enc({ errors: 'down', evaluations: two }), 2))).toBe('ambiguous_decision');
    expect(codeOf(() => parseEvaluations(enc({ context: { error: 'x' }, evaluations: two }), 2))).toBe(
      'ambiguous_decision',
    );
    expect(codeOf(() => parseEvaluations(enc({ errors: [], evaluations: two }), 2))).toBeUndefined();
  });
});

describe('parseConfiguration (AuthZEN 1.0 section 9)', () => {
  const pdp = new URL('http://127.0.0.1:8787');
  const doc = {
    policy_decision_point: 'http://127.0.0.1:8787',
    access_evaluation_endpoint: 'http://127.0.0.1:8787/access/v1/evaluation',
    access_evaluations_endpoint: 'http://127.0.0.1:8787/access/v1/evaluations',
  };

  it('reads the endpoints as paths on the pdpUrl origin', () => {
    expect(parseConfiguration(enc(doc), pdp)).toEqual(defaultEndpoints(''));
    expect(parseConfiguration(enc({ ...doc, policy_decision_point: 'http://127.0.0.1:8787/' }), pdp).evaluation).toBe(
      '/access/v1/evaluation',
    );
    expect(
      parseConfiguration(enc({ ...doc, access_evaluations_endpoint: undefined }), pdp).evaluations,
    ).toBeUndefined();
  });

  it.each([
    ['another PDP', { policy_decision_point: 'http://127.0.0.1:8788' }],
    ['another path', { policy_decision_point: 'http://127.0.0.1:8787/tenant' }],
    ['not a URL', { policy_decision_point: 'pdp' }],
    ['an endpoint elsewhere', { access_evaluation_endpoint: 'https://evil.test/access/v1/evaluation' }],
    ['a batch endpoint elsewhere', { access_evaluations_endpoint: 'http://127.0.0.2:8787/e' }],
  ])('a document naming %s is discarded', (_n, over) => {
    expect(codeOf(() => parseConfiguration(enc({ ...doc, ...over }), pdp))).toBe('discarded');
  });

  it('a body that is no discovery document is invalid_response', () => {
    expect(codeOf(() => parseConfiguration(enc({ policy_decision_point: doc.policy_decision_point }), pdp))).toBe(
      'invalid_response',
    );
    expect(codeOf(() => parseConfiguration(enc('<html>'), pdp))).toBe('invalid_response');
  });
});
