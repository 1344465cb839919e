/**
 * Tool-name globs (docs/dev-pdp.md): `*` matches any run of characters (`_` included, possibly
 * empty), everything else is literal, and the pattern covers the whole name. Matching is linear in
 * the name's length: no regex, no backtracking.
 * @packageDocumentation
 */

/** A compiled glob. @internal */
export interface ToolGlob {
  /** The pattern as written. */
  readonly source: string;
  /** True when the whole `name` matches the pattern. */
  test(name: string): boolean;
}

/**
 * Compiles a glob into its literal parts. Matching anchors the first part at the start and the last
 * at the end, and finds each middle part at its leftmost place after the previous one: leftmost
 * placement is always right for `*`-only globs, and each character of the name is passed over a
 * bounded number of times (at most once per part).
 * @internal
 */
export function compileGlob(pattern: string): ToolGlob {
  const parts = pattern.split('*');
  const first = parts[0] ?? '';
  if (parts.length === 1) return Object.freeze({ source: pattern, test: (name: string) => name === pattern });
  const last = parts[parts.length - 1] ?? '';
  const middle = parts.slice(1, -1).filter((part) => part.length > 0);
  const minLength = parts.reduce((sum, part) => sum + part.length, 0);
  return Object.freeze({
    source: pattern,
    test(name: string): boolean {
      if (name.length < minLength || !name.startsWith(first) || !name.endsWith(last)) return false;
      let at = first.length;
      const end = name.length - last.length;
      for (const part of middle) {
        const found = name.indexOf(part, at);
        if (found < 0 || found + part.length > end) return false;
        at = found + part.length;
      }
      return true;
    },
  });
}
