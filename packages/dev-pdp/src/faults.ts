/**
 * Faults the dev PDP can be told to inject on `POST /api/policy/authorize`, so users can test their
 * own fail-closed paths (docs/dev-pdp.md).
 * @packageDocumentation
 */

import { DEV_PDP_DEFAULTS } from './defaults.js';
import { optionError, refuseUnknownKeys } from './options.js';

/**
 * A fault:
 * - `hang`: accept the request and never answer (until `close()`)
 * - `reset`: destroy the socket without an answer
 * - `status`: answer this HTTP status (200-599) with a JSON error body
 * - `garbage`: answer 200 `application/json` with bytes that are not JSON
 * - `slow`: answer a valid decision, headers first, then the body at `bytesPerSecond` (default 16)
 */
export type Fault =
  | { kind: 'hang' }
  | { kind: 'reset' }
  | { kind: 'status'; status: number }
  | { kind: 'garbage' }
  | { kind: 'slow'; bytesPerSecond?: number };

/** Default trickle rate of the `slow` fault, bytes per second. */
export const DEFAULT_SLOW_BYTES_PER_SECOND = DEV_PDP_DEFAULTS.slowBytesPerSecond;

/** The non-JSON body of the `garbage` fault. @internal */
export const GARBAGE_BODY = Buffer.from([
  0x7b, 0x22, 0x76, 0x65, 0x72, 0xff, 0xfe, 0x00, 0x3c, 0x68, 0x74, 0x6d, 0x6c, 0x3e,
]);

/**
 * Checks a fault given to `setFault` and returns a frozen copy.
 * @throws TypeError (with `option`: `fault`, `fault.kind`, `fault.status`...) for anything that is not one of the {@link Fault} shapes
 * @internal
 */
export function validateFault(fault: unknown): Readonly<Fault> | null {
  if (fault === null || fault === undefined) return null;
  if (typeof fault !== 'object' || Array.isArray(fault)) throw optionError('fault', 'must be an object or null');
  const f = fault as Record<string, unknown>;
  switch (f.kind) {
    case 'hang':
    case 'reset':
    case 'garbage':
      refuseUnknownKeys(f, KIND_ONLY, 'fault');
      return Object.freeze({ kind: f.kind });
    case 'status': {
      refuseUnknownKeys(f, STATUS_KEYS, 'fault');
      const status = f.status;
      if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
        throw optionError('fault.status', 'must be an integer from 200 to 599');
      }
      return Object.freeze({ kind: 'status', status });
    }
    case 'slow': {
      refuseUnknownKeys(f, SLOW_KEYS, 'fault');
      const rate = f.bytesPerSecond;
      if (rate !== undefined && (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0)) {
        throw optionError('fault.bytesPerSecond', 'must be a positive number');
      }
      return Object.freeze(rate === undefined ? { kind: 'slow' } : { kind: 'slow', bytesPerSecond: rate });
    }
    default:
      throw optionError('fault.kind', "must be 'hang', 'reset', 'status', 'garbage' or 'slow'");
  }
}

const KIND_ONLY: ReadonlySet<string> = new Set(['kind']);
const STATUS_KEYS: ReadonlySet<string> = new Set(['kind', 'status']);
const SLOW_KEYS: ReadonlySet<string> = new Set(['kind', 'bytesPerSecond']);
