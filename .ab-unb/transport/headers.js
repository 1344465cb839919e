/**
 * Checks of a status-200 response's headers before its body is read (docs/fail-closed.md, rule 3):
 * JSON with at most one `charset`, that one `utf-8`, and no content coding. The only content-type import.
 * Each check is a few comparisons for the headers a PDP usually sends (this runs on every decision).
 * @internal
 */
import contentType from 'content-type';
import { AttemptFailure } from '../internal/failure.js';
// What almost every PDP sends, accepted without parsing (the parser costs about 25 times a compare).
const PLAIN = 'application/json';
const PLAIN_UTF8 = 'application/json; charset=utf-8';
// The same, lower-cased, in the other spellings servers use; each is one well-formed media type with
// one utf-8 charset. (No character outside ASCII lower-cases into any of these strings: the only one
// that lower-cases into ASCII is the Kelvin sign, to `k`.)
const COMMON_LOWER = new Set([
    PLAIN,
    PLAIN_UTF8,
    'application/json;charset=utf-8',
    'application/json; charset="utf-8"',
    'application/json;charset="utf-8"',
]);
function invalid(message) {
    return new AttemptFailure('invalid_response', message);
}
/**
 * Counts the parameters of a media type that the parser accepted: outside a quoted string, every `;`
 * starts one. The parser keeps only the last of two parameters with one name; comparing this count
 * with the names it kept finds the duplicates it dropped.
 */
function countParameters(header) {
    let n = 0;
    let quoted = false;
    for (let i = 0; i < header.length; i++) {
        const c = header.charCodeAt(i);
        if (quoted) {
            if (c === 0x5c /* \ */)
                i++;
            else if (c === 0x22 /* " */)
                quoted = false;
        }
        else if (c === 0x22)
            quoted = true;
        else if (c === 0x3b /* ; */)
            n++;
    }
    return n;
}
/**
 * Checks the `Content-Type` of a PDP answer: exactly the media type `application/json` (RFC 9110
 * section 8.3, parsed by the `content-type` package), no parameter given twice, and a `charset`, if
 * any, equal to `utf-8` (case-insensitive, quoted or not). A `charset=` inside a quoted parameter
 * value is text, not a parameter.
 * @param value the header as undici reports it (an array when the header came more than once)
 * @throws AttemptFailure `invalid_response` when absent, repeated, malformed, not JSON, with a
 *   parameter given twice, or with a charset other than `utf-8`
 */
export function checkContentType(value) {
    if (value === PLAIN || value === PLAIN_UTF8)
        return;
    if (typeof value !== 'string')
        throw invalid('PDP response has no single Content-Type');
    if (COMMON_LOWER.has(value.toLowerCase()))
        return;
    let parsed;
    try {
        parsed = contentType.parse(value);
    }
    catch {
        throw invalid('PDP response Content-Type is malformed');
    }
    if (parsed.type !== PLAIN)
        throw invalid('PDP response is not application/json');
    const { parameters } = parsed;
    if (Object.keys(parameters).length !== countParameters(value)) {
        throw invalid('PDP response Content-Type repeats a parameter');
    }
    const charset = parameters.charset;
    if (charset !== undefined && charset.toLowerCase() !== 'utf-8') {
        throw invalid('PDP response charset is not utf-8');
    }
}
function is(value, token) {
    return typeof value === 'string' && (value === token || value.trim().toLowerCase() === token);
}
/**
 * Refuses any content coding: a `Content-Encoding` other than `identity`, or a `Transfer-Encoding`
 * other than `chunked` (`gzip, chunked` included). Such a body is refused, never decoded: the bytes
 * that are checked are the bytes that came (docs/fail-closed.md, rule 3).
 * @param headers the response headers as undici reports them (lower-case names)
 * @throws AttemptFailure `invalid_response`
 */
export function checkNoContentCoding(headers) {
    const ce = headers['content-encoding'];
    if (ce !== undefined && !is(ce, 'identity'))
        throw invalid('PDP response has a Content-Encoding');
    const te = headers['transfer-encoding'];
    if (te !== undefined && !is(te, 'chunked'))
        throw invalid('PDP response has a Transfer-Encoding other than chunked');
}
