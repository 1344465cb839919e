/** How the transport classifies what undici reports (src/transport/http.ts `classifyError`). */
import { describe, expect, it } from 'vitest';
import { isRetryable } from '../../../src/core/retry.js';
import { ABORT_CAUSES, type AbortCause, AbortReason } from '../../../src/internal/abort.js';
import { AttemptFailure } from '../../../src/internal/failure.js';
import { classifyError } from '../../../src/transport/http.js';

const live = { aborted: false, reason: undefined };
const withCode = (code: string) => Object.assign(new Error('undici'), { code });

describe('classifyError', () => {
  it.each(Object.keys(ABORT_CAUSES) as AbortCause[])('an abort for %s takes its code from ABORT_CAUSES', (cause) => {
    const f = classifyError(new Error('aborted'), { aborted: true, reason: new AbortReason(cause) });
    expect(f.code).toBe(ABORT_CAUSES[cause].code);
    expect(f.abortCause).toBe(cause);
  });
  it('an abort with a reason of the caller is `aborted`', () => {
    const f = classifyError(new Error('aborted'), { aborted: true, reason: new Error('user') });
    expect(f.code).toBe('aborted');
    expect(isRetryable(f)).toBe(false);
  });
  it.each([
    ['ECONNREFUSED', 'pdp_unreachable', true],
    ['ECONNRESET', 'pdp_unreachable', true],
    ['UND_ERR_SOCKET', 'pdp_unreachable', true],
    ['UND_ERR_CONNECT_TIMEOUT', 'pdp_unreachable', true],
    ['UND_ERR_HEADERS_TIMEOUT', 'pdp_timeout', true],
    ['UND_ERR_BODY_TIMEOUT', 'pdp_timeout', true],
    ['UND_ERR_CLOSED', 'pdp_unreachable', false],
    ['UND_ERR_DESTROYED', 'pdp_unreachable', false],
    ['HPE_INVALID_CONSTANT', 'invalid_response', false],
    ['HPE_UNEXPECTED_CONTENT_LENGTH', 'invalid_response', false],
    ['UND_ERR_INFO', 'invalid_response', false],
    ['SOMETHING_ELSE', 'pdp_unreachable', false],
  ])('%s -> %s (retried: %s)', (errorCode, code, retried) => {
    const f = classifyError(withCode(errorCode), live);
    expect(f.code).toBe(code);
    expect(f.errorCode).toBe(errorCode);
    expect(isRetryable(f)).toBe(retried);
  });
  it('a connection failure names the URL it failed at (origin and path), so the reader knows which', () => {
    const where = 'http://127.0.0.1:9/api/policy/authorize';
    expect(classifyError(withCode('ECONNREFUSED'), live, where).message).toBe(
      `PDP unreachable (ECONNREFUSED) at ${where}`,
    );
    expect(classifyError(withCode('UND_ERR_HEADERS_TIMEOUT'), live, where).message).toContain(` at ${where}`);
  });
  it('an error without a code is pdp_unreachable, not retried; an AttemptFailure is kept', () => {
    const f = classifyError(new Error('?'), live);
    expect(f.code).toBe('pdp_unreachable');
    expect(isRetryable(f)).toBe(false);
    const own = new AttemptFailure('invalid_response', 'x');
    expect(classifyError(own, { aborted: true, reason: new AbortReason('deadline') })).toBe(own);
  });
});
