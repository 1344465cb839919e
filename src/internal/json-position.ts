/**
 * Where a JSON text stops being JSON (RFC 8259), for the one line of a usage error and a policy
 * error: the line, column and position. `JSON.parse` names a position in only some of its messages, and
 * they differ between Node versions; some quote the text itself, which a usage line must never repeat
 * (it may be args or a policy). So the position is found here, by the grammar, never from the message.
 * @internal
 */

/** Thrown inside the scan at the first offset that cannot continue a JSON text. */
class Stop {
  constructor(readonly at: number) {}
}

const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/**
 * A recursive-descent reader of the JSON grammar (RFC 8259) that only moves `i` forward, and throws a
 * {@link Stop} at the first offset where the text cannot go on.
 */
class Scanner {
  i = 0;
  readonly n: number;

  constructor(readonly text: string) {
    this.n = text.length;
  }

  stop(): never {
    throw new Stop(this.i);
  }

  ws(): void {
    while (this.i < this.n && WS.has(this.text.charCodeAt(this.i))) this.i++;
  }

  digits(): void {
    const start = this.i;
    while (this.i < this.n && this.text.charCodeAt(this.i) >= 0x30 && this.text.charCodeAt(this.i) <= 0x39) this.i++;
    if (this.i === start) this.stop();
  }

  literal(word: string): void {
    for (let k = 0; k < word.length; k++, this.i++) if (this.text[this.i] !== word[k]) this.stop();
  }

  /** Past the character after a backslash: one of {@link ESCAPES}, or `u` and four hex digits. */
  escape(): void {
    this.i++;
    if (this.i >= this.n) this.stop();
    const e = this.text[this.i] as string;
    if (e === 'u') {
      for (let k = 0; k < 4; k++) {
        this.i++;
        if (this.i >= this.n || !/[0-9A-Fa-f]/.test(this.text[this.i] as string)) this.stop();
      }
    } else if (!ESCAPES.has(e)) this.stop();
  }

  string(): void {
    this.i++; // the opening quote
    for (;;) {
      if (this.i >= this.n) this.stop();
      const c = this.text.charCodeAt(this.i);
      if (c === 0x22) {
        this.i++;
        return;
      }
      if (c < 0x20) this.stop();
      if (c === 0x5c) this.escape();
      this.i++;
    }
  }

  number(): void {
    const { text } = this;
    if (text[this.i] === '-') this.i++;
    if (text[this.i] === '0') this.i++;
    else this.digits();
    if (text[this.i] === '.') {
      this.i++;
      this.digits();
    }
    if (text[this.i] === 'e' || text[this.i] === 'E') {
      this.i++;
      if (text[this.i] === '+' || text[this.i] === '-') this.i++;
      this.digits();
    }
  }

  /** Past the opener of a container: true (and past it) when `closer` comes at once (it is empty). */
  opens(closer: string): boolean {
    this.i++;
    this.ws();
    if (this.text[this.i] !== closer) return false;
    this.i++;
    return true;
  }

  /** After a member or an element: false past a comma, true past `closer` (the container ends). */
  ends(closer: string): boolean {
    this.ws();
    if (this.text[this.i] !== ',' && this.text[this.i] !== closer) this.stop();
    return this.text[this.i++] === closer;
  }

  /** One value; a container's members and elements recurse here, one frame a level (deep texts stay scannable). */
  value(): void {
    this.ws();
    const c = this.text[this.i];
    if (c === '{') {
      if (this.opens('}')) return;
      do {
        this.ws();
        if (this.text[this.i] !== '"') this.stop();
        this.string();
        this.ws();
        if (this.text[this.i] !== ':') this.stop();
        this.i++;
        this.value();
      } while (!this.ends('}'));
    } else if (c === '[') {
      if (this.opens(']')) return;
      do this.value();
      while (!this.ends(']'));
    } else if (c === '"') this.string();
    else if (c === 't') this.literal('true');
    else if (c === 'f') this.literal('false');
    else if (c === 'n') this.literal('null');
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) this.number();
    else this.stop();
  }

  /** The whole text: one value, then only whitespace. */
  whole(): void {
    this.value();
    this.ws();
    if (this.i < this.n) this.stop();
  }
}

/**
 * The offset (in UTF-16 code units, as `JSON.parse` counts) of the first character at which `text`
 * cannot be a JSON text, and whether the text ended there (`ended`: a prefix of a valid text, cut short).
 * @returns undefined when `text` is a JSON text (or nested too deeply to scan)
 */
export function jsonErrorOffset(text: string): { at: number; ended: boolean } | undefined {
  const n = text.length;
  try {
    new Scanner(text).whole();
    return undefined;
  } catch (e) {
    if (e instanceof Stop) return { at: Math.min(e.at, n), ended: e.at >= n };
    return undefined; // nested too deeply for the scan: no position
  }
}

/**
 * Where `text`, which `JSON.parse` refused, stops being JSON: `' at line L, column C (position N)'`
 * (lines and columns from 1, columns and the 0-based position in UTF-16 code units, as an editor and
 * `JSON.parse` count), with `' (it ends early)'` when the text was cut short there, or `''` when no
 * position can be named. Found by the grammar ({@link jsonErrorOffset}), never read from the parser's
 * message (which may quote the text).
 */
export function jsonWhere(text: string): string {
  const where = jsonErrorOffset(text);
  if (where === undefined) return '';
  const { line, column } = lineAndColumn(text, where.at);
  return ` at line ${line}, column ${column} (position ${where.at})${where.ended ? ' (it ends early)' : ''}`;
}

/** The 1-based line and column of `offset` in `text` (a line ends at `\n`; `\r\n` counts once). */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}
