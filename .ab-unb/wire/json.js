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
const COLON = 0x3a;
/**
 * The index of the quote that closes the string opening at `open`: the next '"' not preceded by an odd
 * run of backslashes (`text` is JSON that `JSON.parse` accepted, so there is one).
 */
function closingQuote(text, open) {
    let j = text.indexOf('"', open + 1);
    for (;;) {
        let k = j - 1;
        while (text.charCodeAt(k) === BACKSLASH)
            k--;
        if ((j - 1 - k) % 2 === 0)
            return j;
        j = text.indexOf('"', j + 1);
    }
}
/**
 * True when some object in `text` names a member twice. Names are compared after unescaping, so
 * `"a"` and `"\u0061"` are the same name.
 * @param text - a JSON text that `JSON.parse` already accepted (the scanner relies on its validity)
 */
export function hasDuplicateMemberNames(text) {
    // One entry per open container: the names seen so far for an object, null for an array.
    const stack = [];
    let expectName = false;
    const n = text.length;
    for (let i = 0; i < n; i++) {
        const c = text.charCodeAt(i);
        if (c === QUOTE) {
            const j = closingQuote(text, i);
            if (expectName) {
                const raw = text.slice(i + 1, j);
                const name = raw.includes('\\') ? JSON.parse(text.slice(i, j + 1)) : raw;
                const names = stack[stack.length - 1];
                if (names) {
                    if (names.has(name))
                        return true;
                    names.add(name);
                }
                expectName = false;
            }
            i = j;
        }
        else if (c === OPEN_OBJECT) {
            stack.push(new Set());
            expectName = true;
        }
        else if (c === OPEN_ARRAY) {
            stack.push(null);
            expectName = false;
        }
        else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
            stack.pop();
            expectName = false;
        }
        else if (c === COMMA) {
            expectName = stack[stack.length - 1] != null;
        }
    }
    return false;
}
/**
 * True when every string (names included) in a parsed JSON value is well-formed UTF-16 and every
 * number is finite (`JSON.parse('1e400')` yields Infinity).
 */
export function isIJsonValue(value, depth = 0) {
    if (typeof value === 'string')
        return value.isWellFormed();
    if (typeof value === 'number')
        return Number.isFinite(value);
    if (typeof value !== 'object' || value === null)
        return true;
    if (depth > 512)
        return false;
    if (Array.isArray(value)) {
        for (const v of value)
            if (!isIJsonValue(v, depth + 1))
                return false;
        return true;
    }
    for (const key in value) {
        if (!key.isWellFormed() || !isIJsonValue(value[key], depth + 1))
            return false;
    }
    return true;
}
/**
 * The I-JSON (RFC 7493) problem of a JSON text, given what `JSON.parse` made of it: `'duplicate'` when
 * some object names a member twice (section 2.3), else `'value'` for an unpaired surrogate, a number
 * beyond double range (sections 2.1, 2.2) or nesting past 512 levels, else undefined.
 *
 * The same verdicts as {@link hasDuplicateMemberNames} and {@link isIJsonValue}, in one walk of the
 * parsed value and, as a rule, one native search of the text: every member in the text is followed by
 * one colon outside any string, and `JSON.parse` keeps one own property per distinct name, so the text
 * names a member twice exactly when it has more such colons than the parsed value has own properties.
 * When the text holds no more colons in all than that count, none can be a duplicate's; otherwise the
 * colons outside strings are counted one by one.
 * @param text - a JSON text
 * @param parsed - `JSON.parse(text)` (its own properties are counted; an enumerable property inherited
 *   from a polluted `Object.prototype` is not)
 */
export function ijsonProblem(text, parsed) {
    const members = ownMemberCount(parsed, 0);
    if (members < 0)
        return hasDuplicateMemberNames(text) ? 'duplicate' : 'value';
    if (colonCount(text) === members || nameSeparatorCount(text) === members)
        return undefined;
    return 'duplicate';
}
/** The own properties of every object in a parsed JSON value, or -1 when a string, number or depth is not I-JSON. */
function ownMemberCount(value, depth) {
    if (typeof value === 'string')
        return value.isWellFormed() ? 0 : -1;
    if (typeof value === 'number')
        return Number.isFinite(value) ? 0 : -1;
    if (typeof value !== 'object' || value === null)
        return 0;
    if (depth > 512)
        return -1;
    let n = 0;
    if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
            const m = ownMemberCount(value[i], depth + 1);
            if (m < 0)
                return -1;
            n += m;
        }
        return n;
    }
    const obj = value;
    for (const key in obj) {
        if (!Object.hasOwn(obj, key))
            continue;
        if (!key.isWellFormed())
            return -1;
        const m = ownMemberCount(obj[key], depth + 1);
        if (m < 0)
            return -1;
        n += m + 1;
    }
    return n;
}
/** Every colon in `text`, inside strings or not. */
function colonCount(text) {
    let n = 0;
    for (let i = text.indexOf(':'); i !== -1; i = text.indexOf(':', i + 1))
        n++;
    return n;
}
/** The colons of `text` outside strings: one per member, in a text `JSON.parse` accepted. */
function nameSeparatorCount(text) {
    let n = 0;
    const len = text.length;
    for (let i = 0; i < len; i++) {
        const c = text.charCodeAt(i);
        if (c === COLON)
            n++;
        else if (c === QUOTE)
            i = closingQuote(text, i);
    }
    return n;
}
/**
 * THE one decoder of a JSON body (a PDP's answer, a request to the dev PDP, a hook event): one BOM rule,
 * one UTF-8 rule, one I-JSON rule. `ignoreBOM` keeps a leading U+FEFF in the text, where `JSON.parse`
 * refuses it: a body with a byte-order mark is not JSON here (RFC 8259 section 8.1: senders MUST NOT add
 * one), whoever sent it.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/**
 * Decodes a whole body as one I-JSON value (RFC 7493): valid UTF-8 (a leading byte-order mark is
 * refused), JSON, no duplicate member names, no unpaired surrogates, finite numbers. Never throws:
 * each caller says what a problem means to it (`invalid_response`, a 400, a hook error).
 * @param body - the bytes as received
 */
export function decodeJsonBody(body) {
    let text;
    try {
        text = utf8.decode(body);
    }
    catch {
        return { ok: false, problem: 'utf8' };
    }
    let value;
    try {
        value = JSON.parse(text);
    }
    catch {
        return { ok: false, problem: 'json', text };
    }
    const problem = ijsonProblem(text, value);
    return problem === undefined ? { ok: true, value, text } : { ok: false, problem, text, value };
}
