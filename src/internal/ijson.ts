/**
 * I-JSON (RFC 7493) checks that `JSON.parse` does not make: duplicate member names (section 2.3),
 * strings with unpaired surrogates (section 2.1) and numbers beyond IEEE 754 double range (section 2.2).
 * @internal
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;

/**
 * True when some object in `text` names a member twice. Names are compared after unescaping, so
 * `"a"` and `"\u0061"` are the same name.
 * @param text - a JSON text that `JSON.parse` already accepted (the scanner relies on its validity)
 */
export function hasDuplicateMemberNames(text: string): boolean {
  // One entry per open container: the names seen so far for an object, null for an array.
  const stack: (Set<string> | null)[] = [];
  let expectName = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Jump to the closing quote: the next '"' not preceded by an odd run of backslashes.
      let j = text.indexOf('"', i + 1);
      for (;;) {
        let k = j - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        if ((j - 1 - k) % 2 === 0) break;
        j = text.indexOf('"', j + 1);
      }
      if (expectName) {
        const raw = text.slice(i + 1, j);
        const name = raw.includes('\\') ? (JSON.parse(text.slice(i, j + 1)) as string) : raw;
        const names = stack[stack.length - 1];
        if (names) {
          if (names.has(name)) return true;
          names.add(name);
        }
        expectName = false;
      }
      i = j;
    } else if (c === OPEN_OBJECT) {
      stack.push(new Set());
      expectName = true;
    } else if (c === OPEN_ARRAY) {
      stack.push(null);
      expectName = false;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      stack.pop();
      expectName = false;
    } else if (c === COMMA) {
      expectName = stack[stack.length - 1] != null;
    }
  }
  return false;
}

/**
 * True when every string (names included) in a parsed JSON value is well-formed UTF-16 and every
 * number is finite (`JSON.parse('1e400')` yields Infinity).
 */
export function isIJsonValue(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.isWellFormed();
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object' || value === null) return true;
  if (depth > 512) return false;
  if (Array.isArray(value)) {
    for (const v of value) if (!isIJsonValue(v, depth + 1)) return false;
    return true;
  }
  for (const key in value) {
    if (!key.isWellFormed() || !isIJsonValue((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return true;
}
