/**
 * Bearer API keys of the dev PDP, compared in constant time over fixed-length digests.
 * @packageDocumentation
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { LRUCache } from 'lru-cache';

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

/**
 * Failed attempts at a key per client address, wherever the key is accepted (the console's sign-in and
 * the reviewer endpoints share one): past `attempts` failures within `windowMs` of the first, the
 * client is refused (429) until the window ends, right key or not. Bounded (lru-cache).
 * @internal
 */
export class KeyThrottle {
  readonly #attempts: number;
  readonly #windowMs: number;
  readonly #failures: LRUCache<string, { count: number; since: number }>;

  constructor(attempts: number, windowMs: number) {
    this.#attempts = attempts;
    this.#windowMs = windowMs;
    this.#failures = new LRUCache({ max: 10_000, ttl: windowMs });
  }

  /** Seconds until `client` may try again, or undefined when it may try now. */
  blocked(client: string): number | undefined {
    const failures = this.#failures.get(client);
    if (failures === undefined || failures.count < this.#attempts) return undefined;
    return Math.max(1, Math.ceil((failures.since + this.#windowMs - Date.now()) / 1000));
  }

  /** Counts one failed attempt of `client`. */
  failed(client: string): void {
    const failures = this.#failures.get(client);
    const next = { count: (failures?.count ?? 0) + 1, since: failures?.since ?? Date.now() };
    this.#failures.set(client, next, { noUpdateTTL: failures !== undefined });
  }
}
