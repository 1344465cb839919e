/**
 * The one way every option error is made: a `TypeError` whose `option` names the offending path
 * (docs/api.md), so callers and tests can tell which rule fired. Not public.
 * @internal
 */

/** A `TypeError` carrying the path of the bad option, such as `'permits.algorithms'`. */
export interface OptionTypeError extends TypeError {
  /** The offending option's path, dotted from the options object (`'permits.keys'`, `'interceptors.0.name'`). */
  option: string;
}

/** Most characters of an unknown key echoed into a message (it is the caller's, not a secret, but may be long). */
const KEY_ECHO = 40;

/**
 * Throws a `TypeError` naming `path` in `err.option`. The message names the option, never its value
 * (a value may be a secret).
 * @param scope - who validates, e.g. `'createPep'`
 * @param path - the dotted option path
 * @param problem - what is wrong, e.g. `'expected a positive integer'`
 */
export function optionError(scope: string, path: string, problem: string): never {
  const err = new TypeError(`${scope}: invalid option ${path}: ${problem}`) as OptionTypeError;
  err.option = path;
  throw err;
}

/**
 * Refuses any own key of `obj` not in `known` (a misspelt safety setting must never pass silently).
 * @param prefix - the path of `obj` itself, `''` at the top level
 */
export function refuseUnknownKeys(scope: string, obj: object, known: ReadonlySet<string>, prefix = ''): void {
  for (const key of Object.keys(obj)) {
    if (!known.has(key)) {
      const shown = key.length > KEY_ECHO ? `${key.slice(0, KEY_ECHO)}...` : key;
      optionError(scope, prefix === '' ? key : `${prefix}.${key}`, `unknown option ${JSON.stringify(shown)}`);
    }
  }
}

/** Most milliseconds a Node timer can hold (2^31 - 1); a longer delay fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
