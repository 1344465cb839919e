/**
 * Tool pins for `guardMcpClient(pep, client, { pin })` (docs/visibility.md): the SHA-256 of each tool's
 * RFC 8785 canonical `{ name, description, inputSchema, outputSchema? }`, the pin set as plain JSON,
 * and what a later list says of each tool (unchanged, changed and which field, not pinned). Names are
 * compared after `normalizeToolName` (NFKC, case and separators), never by look-alike glyphs.
 * Internal to `agent-pep/mcp`.
 * @internal
 */
import { optionError } from '../../options/kit.js';
import { canonicalJson, sha256b64url } from '../../permit/hash.js';
import { normalizeToolName } from '../../permit/normalize.js';
import { isObject } from './common.js';
/** The members of a tool definition a pin covers, in the order a changed one is named. */
const PINNED_FIELDS = ['name', 'description', 'inputSchema', 'outputSchema'];
const SHA = /^[A-Za-z0-9_-]{43}$/;
/** The normalized name, or undefined when it normalizes to nothing or is not a string. */
export function normalizedName(name) {
    if (typeof name !== 'string')
        return undefined;
    try {
        return normalizeToolName(name);
    }
    catch {
        return undefined;
    }
}
/** The members a pin covers (`outputSchema` only when present). */
function definitionOf(tool) {
    const def = { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
    if (tool.outputSchema !== undefined)
        def.outputSchema = tool.outputSchema;
    return def;
}
/**
 * The pin of one listed tool: base64url SHA-256 of the RFC 8785 canonical JSON of `{ name, description,
 * inputSchema, outputSchema? }` (an absent `description` is left out, as JSON leaves out `undefined`).
 * @throws TypeError when the definition is not JSON
 */
export function pinOf(tool) {
    return sha256b64url(canonicalJson(definitionOf(tool)));
}
/**
 * Checks a pin set given as `{ pin }`.
 * @throws TypeError with `err.option` `'pin'` when it is malformed or of another version
 */
export function readPinSet(scope, value) {
    const bad = (why) => optionError(scope, 'pin', why);
    if (!isObject(value) || Array.isArray(value))
        return bad('expected true or a pin set from pepPins()');
    for (const key of Object.keys(value)) {
        if (key !== 'version' && key !== 'server' && key !== 'tools')
            bad('a pin set has only version, server and tools');
    }
    if (value.version !== 1)
        bad('a pin set of another version');
    const server = value.server;
    if (!isObject(server) || typeof server.name !== 'string' || server.name === '' || typeof server.version !== 'string')
        bad('server must be { name, version }');
    const tools = value.tools;
    if (!isObject(tools) || Array.isArray(tools))
        return bad('tools must be an object of name -> sha256');
    const seen = new Set();
    const out = {};
    for (const [name, sha] of Object.entries(tools)) {
        const norm = normalizedName(name);
        if (norm === undefined)
            bad('a pinned tool name normalizes to nothing');
        if (seen.has(norm))
            bad('two pinned tool names normalize alike');
        if (typeof sha !== 'string' || !SHA.test(sha))
            bad('each pin must be a base64url SHA-256 (43 characters)');
        seen.add(norm);
        out[name] = sha;
    }
    const s = server;
    return { version: 1, server: { name: s.name, version: s.version }, tools: out };
}
/** The pins of one guarded client, and what the last list said of each tool. */
export class PinBook {
    #pins = new Map();
    #allowNew;
    #server;
    /** Whether the pins were given (a pin set) or are still to be taken at the first list. */
    #taken;
    /** Normalized name -> status at the last list; undefined until a list was checked (or after list_changed). */
    #status;
    /** Whether the list being checked (all its pages) is the one that takes the pins. */
    #takingList = false;
    constructor(given, allowNew) {
        this.#allowNew = allowNew;
        this.#taken = given !== undefined;
        if (given) {
            this.#server = { ...given.server };
            for (const [name, sha] of Object.entries(given.tools)) {
                this.#pins.set(normalizedName(name), { name, sha });
            }
        }
    }
    /** Whether the last list's statuses are current (false before the first list and after list_changed). */
    get current() {
        return this.#status !== undefined;
    }
    /** Forgets the statuses: a `notifications/tools/list_changed` arrived. */
    invalidate() {
        this.#status = undefined;
    }
    /**
     * Checks the server the client is connected to against the pin set's.
     * @throws TypeError with `err.option` `'pin'` when the pin set is for another server (name differs)
     */
    checkServer(scope, server) {
        if (server === undefined || typeof server.name !== 'string')
            return;
        if (this.#server === undefined) {
            this.#server = { name: server.name, version: typeof server.version === 'string' ? server.version : '' };
        }
        else if (this.#server.name !== server.name) {
            optionError(scope, 'pin', 'the pin set is for another server');
        }
    }
    /**
     * Checks a whole list (every page): each tool's status. The first list of `{ pin: true }` takes the
     * pins; with `allowNew`, a tool not pinned is pinned at first sight.
     */
    check(tools, continuing = false) {
        // A later page of a paginated list adds to the statuses of the first.
        const status = continuing && this.#status ? this.#status : new Map();
        const byName = new Map();
        for (const tool of tools) {
            const norm = normalizedName(tool.name);
            if (norm === undefined)
                continue;
            const list = byName.get(norm);
            if (list)
                list.push(tool);
            else
                byName.set(norm, [tool]);
        }
        if (!continuing || this.#status === undefined)
            this.#takingList = !this.#taken;
        const taking = this.#takingList;
        for (const [norm, same] of byName) {
            if (same.length > 1) {
                status.set(norm, { kind: 'ambiguous' });
                continue;
            }
            const tool = same[0];
            let sha;
            try {
                sha = pinOf(tool);
            }
            catch {
                status.set(norm, { kind: 'changed', field: undefined });
                continue;
            }
            const pin = this.#pins.get(norm);
            if (pin === undefined) {
                if (taking || this.#allowNew) {
                    this.#pins.set(norm, { name: tool.name, sha, def: definitionOf(tool) });
                    status.set(norm, { kind: 'ok' });
                }
                else
                    status.set(norm, { kind: 'new' });
            }
            else if (pin.sha === sha) {
                pin.def ??= definitionOf(tool);
                status.set(norm, { kind: 'ok' });
            }
            else {
                const field = changedField(pin.def, definitionOf(tool)) ?? (pin.name !== tool.name ? 'name' : undefined);
                status.set(norm, { kind: 'changed', field });
            }
        }
        this.#taken = true;
        this.#status = status;
    }
    /** What the last list said of a tool; a tool it did not list is `new` (not pinned) or `changed` (gone). */
    statusOf(name) {
        const norm = normalizedName(name);
        if (norm === undefined)
            return { kind: 'new' };
        const s = this.#status?.get(norm);
        if (s !== undefined)
            return s;
        return this.#pins.has(norm) ? { kind: 'changed', field: undefined } : { kind: 'new' };
    }
    /** The pin set as plain JSON (tools sorted by name, for a reviewable diff). */
    toJSON() {
        const tools = {};
        const pins = [...this.#pins.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        for (const pin of pins)
            tools[pin.name] = pin.sha;
        return { version: 1, server: { ...(this.#server ?? { name: '', version: '' }) }, tools };
    }
}
/** The first pinned member whose canonical JSON differs, when the old definition was seen. */
function changedField(before, after) {
    if (before === undefined)
        return undefined;
    for (const field of PINNED_FIELDS) {
        const a = before[field] === undefined ? undefined : canonicalJson(before[field]);
        const b = after[field] === undefined ? undefined : canonicalJson(after[field]);
        if (a !== b)
            return field;
    }
    return undefined;
}
/** The text of a `tool_changed` refusal: names the tool and, when known, the field that changed. */
export function toolChangedMessage(name, status) {
    const shown = JSON.stringify(name.slice(0, 64));
    switch (status.kind) {
        case 'changed':
            return status.field !== undefined
                ? `tool ${shown} changed since it was pinned (${status.field})`
                : `tool ${shown} differs from its pin`;
        case 'ambiguous':
            return `tool ${shown} is listed twice under names that normalize alike`;
        default:
            return `tool ${shown} was not pinned`;
    }
}
