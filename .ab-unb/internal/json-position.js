/**
 * Where a JSON text stops being JSON (RFC 8259), for the one line of a usage error and a policy
 * error: the line, column and position. `JSON.parse` names a position in only some of its messages, and
 * they differ between Node versions; some quote the text itself, which a usage line must never repeat
 * (it may be args or a policy). So the position is found here, by the grammar, never from the message.
 * @internal
 */
/** Thrown inside the scan at the first offset that cannot continue a JSON text. */
class Stop {
    at;
    constructor(at) {
        this.at = at;
    }
}
const WS = new Set([0x20, 0x09, 0x0a, 0x0d]);
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);
/**
 * The offset (in UTF-16 code units, as `JSON.parse` counts) of the first character at which `text`
 * cannot be a JSON text, and whether the text ended there (`ended`: a prefix of a valid text, cut short).
 * @returns undefined when `text` is a JSON text (or nested too deeply to scan)
 */
export function jsonErrorOffset(text) {
    let i = 0;
    const n = text.length;
    const stop = () => {
        throw new Stop(i);
    };
    const ws = () => {
        while (i < n && WS.has(text.charCodeAt(i)))
            i++;
    };
    const digits = () => {
        const start = i;
        while (i < n && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39)
            i++;
        if (i === start)
            stop();
    };
    const literal = (word) => {
        for (let k = 0; k < word.length; k++, i++)
            if (text[i] !== word[k])
                stop();
    };
    const string = () => {
        i++; // the opening quote
        for (;;) {
            if (i >= n)
                stop();
            const c = text.charCodeAt(i);
            if (c === 0x22) {
                i++;
                return;
            }
            if (c < 0x20)
                stop();
            if (c === 0x5c) {
                i++;
                if (i >= n)
                    stop();
                const e = text[i];
                if (e === 'u') {
                    for (let k = 0; k < 4; k++) {
                        i++;
                        if (i >= n || !/[0-9A-Fa-f]/.test(text[i]))
                            stop();
                    }
                }
                else if (!ESCAPES.has(e))
                    stop();
            }
            i++;
        }
    };
    const number = () => {
        if (text[i] === '-')
            i++;
        if (text[i] === '0')
            i++;
        else
            digits();
        if (text[i] === '.') {
            i++;
            digits();
        }
        if (text[i] === 'e' || text[i] === 'E') {
            i++;
            if (text[i] === '+' || text[i] === '-')
                i++;
            digits();
        }
    };
    /** Past the opener of a container: true (and past it) when `closer` comes at once (it is empty). */
    const opens = (closer) => {
        i++;
        ws();
        if (text[i] !== closer)
            return false;
        i++;
        return true;
    };
    /** After a member or an element: false past a comma, true past `closer` (the container ends). */
    const ends = (closer) => {
        ws();
        if (text[i] !== ',' && text[i] !== closer)
            stop();
        return text[i++] === closer;
    };
    const value = () => {
        ws();
        const c = text[i];
        if (c === '{') {
            if (opens('}'))
                return;
            do {
                ws();
                if (text[i] !== '"')
                    stop();
                string();
                ws();
                if (text[i] !== ':')
                    stop();
                i++;
                value();
            } while (!ends('}'));
            return;
        }
        if (c === '[') {
            if (opens(']'))
                return;
            do
                value();
            while (!ends(']'));
            return;
        }
        if (c === '"')
            string();
        else if (c === 't')
            literal('true');
        else if (c === 'f')
            literal('false');
        else if (c === 'n')
            literal('null');
        else if (c === '-' || (c !== undefined && c >= '0' && c <= '9'))
            number();
        else
            stop();
    };
    try {
        value();
        ws();
        if (i < n)
            stop();
        return undefined;
    }
    catch (e) {
        if (e instanceof Stop)
            return { at: Math.min(e.at, n), ended: e.at >= n };
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
export function jsonWhere(text) {
    const where = jsonErrorOffset(text);
    if (where === undefined)
        return '';
    const { line, column } = lineAndColumn(text, where.at);
    return ` at line ${line}, column ${column} (position ${where.at})${where.ended ? ' (it ends early)' : ''}`;
}
/** The 1-based line and column of `offset` in `text` (a line ends at `\n`; `\r\n` counts once). */
export function lineAndColumn(text, offset) {
    let line = 1;
    let start = 0;
    for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
        line++;
        start = i + 1;
    }
    return { line, column: offset - start + 1 };
}
