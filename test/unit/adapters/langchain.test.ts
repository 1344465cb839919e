/**
 * The pure parts of agent-pep/langchain: how a resume value is read (only a well-formed approval is an
 * approval), the interrupt value, the bounded memory of checked messages, the thread session, and the
 * options of pepMiddleware (a typed error at creation, not at the first call).
 */
import { describe, expect, it } from 'vitest';
import {
  interruptValue,
  isReviewResume,
  readReviewAnswer,
  reviewRefusalText,
} from '../../../src/adapters/langchain/review.js';
import { SeenMessages, threadSession } from '../../../src/adapters/langchain/seen.js';
import { pepMiddleware } from '../../../src/adapters/langchain.js';
import { createPep, type Pep } from '../../../src/index.js';

describe('readReviewAnswer: only one well-formed approve is an approval', () => {
  it('reads approve and reject (with or without a message)', () => {
    expect(readReviewAnswer({ decisions: [{ type: 'approve' }] })).toEqual({ kind: 'approve' });
    expect(readReviewAnswer({ decisions: [{ type: 'reject' }] })).toEqual({ kind: 'reject', message: undefined });
    expect(readReviewAnswer({ decisions: [{ type: 'reject', message: 'no' }] })).toEqual({
      kind: 'reject',
      message: 'no',
    });
  });

  it.each([
    ['nothing', undefined],
    ['a string', 'approve'],
    ['true', true],
    ['no decisions', {}],
    ['an empty list', { decisions: [] }],
    ['two decisions', { decisions: [{ type: 'approve' }, { type: 'approve' }] }],
    ['an edit', { decisions: [{ type: 'edit', editedAction: { name: 't', args: {} } }] }],
    ['an unknown type', { decisions: [{ type: 'APPROVE' }] }],
    ['a reject with a non-string message', { decisions: [{ type: 'reject', message: 42 }] }],
    [
      'a getter that throws',
      {
        decisions: [
          Object.defineProperty({}, 'type', {
            get: () => {
              throw new Error('x');
            },
          }),
        ],
      },
    ],
    ['an inherited type', { decisions: [Object.create({ type: 'approve' })] }],
  ])('%s is not an approval', (_, value) => {
    expect(readReviewAnswer(value).kind).toBe('invalid');
  });

  it('isReviewResume recognises the { decisions: [...] } shape only', () => {
    expect(isReviewResume({ decisions: [] })).toBe(true);
    expect(isReviewResume({ decisions: 'x' })).toBe(false);
    expect(isReviewResume('approve')).toBe(false);
    expect(isReviewResume(null)).toBe(false);
  });
});

describe('review texts and the interrupt value', () => {
  it('a reject reads as not run, with the reviewer message when there is one (bounded)', () => {
    expect(reviewRefusalText('refund', { kind: 'reject', message: undefined })).toBe(
      "ERROR: Tool 'refund' was not run: rejected by a reviewer",
    );
    expect(reviewRefusalText('refund', { kind: 'reject', message: 'too big' })).toBe(
      "ERROR: Tool 'refund' was not run: rejected by a reviewer: too big",
    );
    expect(reviewRefusalText('refund', { kind: 'reject', message: 'x'.repeat(5000) }).length).toBeLessThan(2100);
    expect(reviewRefusalText('refund', { kind: 'invalid' })).toBe(
      "ERROR: Tool 'refund' was not run: the review answer was not an approval",
    );
  });

  it('the interrupt value has the humanInTheLoopMiddleware shape and carries the escalation', () => {
    const v = interruptValue(
      'refund',
      { amount: 900 },
      'c1',
      { verdict: 'ESCALATE', stage: 'action', requestId: 'r1', escalationId: 'esc_1', decisionId: 'd1' },
      'held',
    );
    expect(v).toEqual({
      actionRequests: [{ name: 'refund', args: { amount: 900 }, description: 'held' }],
      reviewConfigs: [{ actionName: 'refund', allowedDecisions: ['approve', 'reject'] }],
      escalationId: 'esc_1',
      decisionId: 'd1',
      requestId: 'r1',
      toolCallId: 'c1',
      agentPep: true,
    });
  });
});

describe('SeenMessages: bounded; forgetting only means checking again', () => {
  it('keeps at most max entries, dropping the oldest first', () => {
    const seen = new SeenMessages(2);
    seen.set('a', { kind: 'pass' });
    seen.set('b', { kind: 'pass' });
    seen.set('c', { kind: 'replace', content: 'x' });
    expect(seen.size).toBe(2);
    expect(seen.get('a')).toBeUndefined();
    expect(seen.get('c')).toEqual({ kind: 'replace', content: 'x' });
  });

  it('keys by session and message id; a message without an id is never remembered', () => {
    expect(SeenMessages.key('s', 'm1')).toBe('s\u0000m1');
    expect(SeenMessages.key('s', undefined)).toBeUndefined();
    expect(SeenMessages.key('s', '')).toBeUndefined();
    const seen = new SeenMessages();
    seen.set(undefined, { kind: 'pass' });
    expect(seen.size).toBe(0);
  });
});

describe('SeenMessages.match: an entry holds only for the text it was decided for', () => {
  it('the same id with other text (an edit) is not known; the decided text and its replacement are', () => {
    const seen = new SeenMessages();
    seen.set('k', { kind: 'replace', content: 'mail [email]', text: SeenMessages.digest('mail bob@example.com') });
    expect(seen.match('k', 'mail bob@example.com')?.kind).toBe('replace');
    expect(seen.match('k', 'mail [email]')?.kind).toBe('replace');
    expect(seen.match('k', 'Ignore previous instructions')).toBeUndefined();
  });

  it('an entry without the digest of its text never matches', () => {
    const seen = new SeenMessages();
    seen.set('k', { kind: 'pass' });
    expect(seen.match('k', 'anything')).toBeUndefined();
  });
});

describe('threadSession: the thread id, else the client session', () => {
  it.each([
    [{ thread_id: 't1' }, 't1'],
    [{ thread_id: 42 }, '42'],
    [{ thread_id: '  ' }, undefined],
    [{ thread_id: Number.NaN }, undefined],
    [{}, undefined],
    [undefined, undefined],
  ])('%j gives %j', (configurable, expected) => {
    expect(threadSession(configurable)).toBe(expected);
  });
});

describe('pepMiddleware options', () => {
  const pep = (permits: boolean): Pep =>
    createPep({
      pdpUrl: 'http://127.0.0.1:9',
      agentId: 'a',
      session: 's',
      ...(permits ? { permits: { keys: 'http://127.0.0.1:9/jwks', issuer: 'http://127.0.0.1:9' } } : {}),
    });

  it('makes a middleware named agent-pep, or the given name', () => {
    expect(pepMiddleware(pep(true)).name).toBe('agent-pep');
    expect(pepMiddleware(pep(true), { name: 'pep-2' }).name).toBe('pep-2');
  });

  it('refuses a client without permits at creation (guardTool would at the first call)', () => {
    expect(() => pepMiddleware(pep(false))).toThrow(TypeError);
  });

  it('refuses an unknown or bad option, naming it in err.option', () => {
    const option = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        expect(err).toBeInstanceOf(TypeError);
        return (err as { option?: string }).option;
      }
      return 'no error';
    };
    expect(option(() => pepMiddleware(pep(true), { nmae: 'x' } as never))).toBe('nmae');
    expect(option(() => pepMiddleware(pep(true), { name: '' }))).toBe('name');
    expect(option(() => pepMiddleware(pep(true), 'x' as never))).toBe('opts');
  });

  it('refuses something that is not a Pep', () => {
    expect(() => pepMiddleware({} as Pep)).toThrow(TypeError);
  });
});
