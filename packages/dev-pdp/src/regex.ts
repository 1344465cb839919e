/**
 * Linear-time regexes for policies: RE2 syntax through `re2js` (the only re2js import), so that no
 * content or args a request carries can stall the dev PDP (docs/dev-pdp.md).
 * @packageDocumentation
 */
import { LRUCache } from 'lru-cache';
import { RE2JS } from 're2js';
import { DEV_PDP_DEFAULTS } from './defaults.js';

/** A compiled RE2-syntax regex: searched (a match anywhere counts), and replaceable. @internal */
export interface LinearRegex {
  /** The source as written in the policy. */
  readonly source: string;
  /** True when the regex matches anywhere in `text`. */
  test(text: string): boolean;
  /** `text` with every match replaced by `replacement`, taken literally (no `$1` or `$&`). */
  replaceAll(text: string, replacement: string): string;
  /**
   * The first match in `text`: each named group (`(?P<name>..)`) by name (`undefined` for a group that
   * took no part), or null when there is no match.
   */
  exec(text: string): Record<string, string | undefined> | null;
  /** Every match of `text`, as strings, in order. */
  matchAll(text: string): string[];
  /** The names of the named groups. */
  readonly groupNames: readonly string[];
}

/** Why a source was refused, for the policy error. Never quotes the source. */
export type RegexRefusal = { ok: false; reason: string };

/** What {@link compileLinearRegex} returns. */
export type CompiledRegex = Readonly<{ ok: true; regex: LinearRegex }> | Readonly<RegexRefusal>;

/** How many compiled sources are kept; the oldest is dropped past it. */
export const REGEX_CACHE_SIZE = 256;

// Compiled regexes by source, oldest first. A policy load checks each source in its schema and then
// builds its latch from it, and the same policy is loaded again by every dev PDP a process starts: both
// share one compilation. Sharing is safe: a search runs synchronously to its end, and what a compiled
// RE2JS keeps between searches (a pool of matchers, a lazily built DFA of bounded size) only makes the
// next search faster. The cache holds that memory after a PDP closes, hence its small bound; a source
// longer than a policy may hold (which the schema refuses) is compiled but never kept.
const cache = new LRUCache<string, CompiledRegex>({ max: REGEX_CACHE_SIZE });

/**
 * Compiles an RE2-syntax regex. Lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`) and backreferences (`\1`,
 * `\k<name>`) have no linear-time algorithm and are refused; so is anything else re2js refuses. The
 * last {@link REGEX_CACHE_SIZE} sources are kept compiled: the same source gives the same (frozen) answer.
 * @returns the regex, or why it was refused
 * @internal
 */
export function compileLinearRegex(source: string): CompiledRegex {
  return compileCached(source);
}

/** An RE2 source that matches `text` literally (RE2 `QuoteMeta`). @internal */
export function quoteRegex(text: string): string {
  return RE2JS.quote(text);
}

function compileCached(source: string): CompiledRegex {
  const hit = cache.get(source);
  if (hit !== undefined) return hit;
  const compiled = Object.freeze(compile(source));
  if (source.length > DEV_PDP_DEFAULTS.maxRegexLength) return compiled;
  cache.set(source, compiled);
  return compiled;
}

/**
 * The largest product of nested counted repetitions in `source` (RE2 syntax: `{n}`, `{n,}`, `{n,m}`
 * after an atom, a group included: `(?:a{200}){5}` repeats `a` 1000 times), or 1 when there is none.
 * What is not one is skipped: an escape (`\{`), a class (`[{]`), the argument of `\x{...}`, `\p{...}`
 * or `\P{...}`, quoted text (`\Q...\E`), braces not of that form (`a{,5}` and `x{` are literals in RE2).
 */
export function largestRepeat(source: string): number {
  // the largest product inside each open group, innermost last
  const frames: number[] = [1];
  let largest = 1;
  // the largest product inside the atom just read (a group's, else 1): what a count after it multiplies
  let atom = 1;
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const next = source[i + 1];
      if (!inClass && next === 'Q') {
        const end = source.indexOf('\\E', i + 2);
        i = end < 0 ? source.length : end + 1;
      } else {
        i++;
        if ((next === 'x' || next === 'p' || next === 'P') && source[i + 1] === '{') {
          const end = source.indexOf('}', i + 1);
          if (end > 0) i = end;
        }
      }
      if (!inClass) atom = 1;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      atom = 1;
      // a `]` first in the class (after `^`) is a literal
      if (source[i + 1] === '^') i++;
      if (source[i + 1] === ']') i++;
    } else if (c === '(') {
      frames.push(1);
    } else if (c === ')') {
      atom = frames.length > 1 ? (frames.pop() as number) : 1;
      const top = frames.length - 1;
      frames[top] = Math.max(frames[top] as number, atom);
    } else if (c === '{') {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(source.slice(i, i + 24));
      if (m) {
        const product = atom * Math.max(Number(m[1]), m[2] ? Number(m[2]) : 0);
        const top = frames.length - 1;
        frames[top] = Math.max(frames[top] as number, product);
        largest = Math.max(largest, product);
        atom = product;
        i += m[0].length - 1;
      } else atom = 1;
    } else if (c !== '*' && c !== '+' && c !== '?') {
      atom = 1;
    }
  }
  return largest;
}

function compile(source: string): { ok: true; regex: LinearRegex } | RegexRefusal {
  const repeat = largestRepeat(source);
  if (repeat > DEV_PDP_DEFAULTS.maxRegexRepeat) {
    return {
      ok: false,
      reason: `a repetition count over ${DEV_PDP_DEFAULTS.maxRegexRepeat} (${repeat}, nested counts multiplied): it repeats its part that many times, and every text takes that much longer`,
    };
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(source);
  } catch (error) {
    // name the two refusals policy authors meet most, from the source (re2js only says "invalid")
    if (/(?:^|[^\\])(?:\\\\)*\(\?<?[=!]/.test(source)) {
      return {
        ok: false,
        reason: 'lookaround ((?=, (?!, (?<=, (?<!) is not RE2 syntax: it has no linear-time algorithm',
      };
    }
    if (/(?:^|[^\\])(?:\\\\)*\\(?:[1-9]|k<)/.test(source)) {
      return {
        ok: false,
        reason: 'backreferences (\\1, \\k<name>) are not RE2 syntax: they have no linear-time algorithm',
      };
    }
    const detail = error instanceof Error ? error.message.replace(/: `[\s\S]*`$/, '') : 'not a regular expression';
    return { ok: false, reason: `not a valid RE2 regex (${detail})` };
  }
  const literal = (replacement: string) => RE2JS.quoteReplacement(replacement);
  const names = Object.freeze(Object.keys(compiled.namedGroups()));
  return {
    ok: true,
    regex: Object.freeze({
      source,
      test: (text: string) => compiled.test(text),
      replaceAll: (text: string, replacement: string) => compiled.matcher(text).replaceAll(literal(replacement)),
      exec: (text: string) => {
        const m = compiled.matcher(text);
        if (!m.find()) return null;
        const out: Record<string, string | undefined> = {};
        for (const name of names) out[name] = m.group(name) ?? undefined;
        return out;
      },
      matchAll: (text: string) => {
        const m = compiled.matcher(text);
        const out: string[] = [];
        while (m.find()) out.push(m.group() ?? '');
        return out;
      },
      groupNames: names,
    }),
  };
}
