/**
 * Bearer API keys of the dev PDP, compared in constant time over fixed-length digests.
 * @packageDocumentation
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** True when a request carries the expected key. @internal */
export type KeyCheck = (req: IncomingMessage) => boolean;

/**
 * A check of `authorization: Bearer <key>`; with no key, every request passes. Neither the length nor
 * a prefix of the key leaks through timing.
 * @internal
 */
export function bearerCheck(key: string | undefined): KeyCheck {
  if (key === undefined) return () => true;
  const expected = digest(key);
  return (req) => {
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer +(\S+)$/i.exec(header) : null;
    const given = digest(match?.[1] ?? '');
    return timingSafeEqual(given, expected) && match !== null;
  };
}
