/**
 * The option-validation kit as the option tables of `options/` see it: the one kit of
 * `internal/option-kit.ts` (one rule and one limit for each kind of option, a `TypeError` with
 * `err.option` naming the path).
 * @internal
 */
export { booleanOption, integerOption, MAX_MS, msOption, nonEmptyStringOption, optionError, optionTypeError, refuseUnknownKeys, } from '../internal/option-kit.js';
