/**
 * Tool pins for `guardMcpClient(pep, transport, { pin })` (docs/visibility.md): the SHA-256 of each tool's
 * RFC 8785 canonical `{ name, title?, description, inputSchema, outputSchema?, annotations? }`, the pin set as plain JSON,
 * and what a later list says of each tool (unchanged, changed and which field, not pinned). Names are
 * compared after `normalizeToolName` (NFKC, case and separators), never by look-alike glyphs.
 * Internal to `agent-pep/mcp`.
 * @internal
 */

import { normalizeToolName } from '../../internal/tool-name.js';
import { optionError } from '../../options/kit.js';
import { canonicalJson, sha256b64url } from '../../permit/hash.js';
import { isObject } from './common.js';

/** A pin set, as `pepPins()` returns it and `{ pin }` takes it (docs/visibility.md). */
export interface McpPinSet {
  version: 1;
  /** The server the pins were taken from (its `initialize` answer). */
  server: { name: string; version: string };
  /** Tool name as listed -> base64url SHA-256 of its canonical definition. */
  tools: Record<string, string>;
}

/** The members of a tool definition a pin covers, in the order a changed one is named. */
const PINNED_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations'] as const;
type PinnedField = (typeof PINNED_FIELDS)[number];
type Definition = Partial<Record<PinnedField, unknown>>;

/** What a later list says of one tool. */
export type PinStatus =
  | { kind: 'ok' }
  | { kind: 'changed'; field: string | undefined }
  | { kind: 'new' }
  /** Two listed tools whose names normalize alike: neither can be told from the other. */
  | { kind: 'ambiguous' };

const SHA = /^[A-Za-z0-9_-]{43}$/;

/** The normalized name, or undefined when it normalizes to nothing or is not a string. */
export function normalizedName(name: unknown): string | undefined {
  if (typeof name !== 'string') return undefined;
  try {
    return normalizeToolName(name);
  } catch {
    return undefined;
  }
}

/**
 * The members a pin covers (CONTRACT sections 13 and 16): `name`, `title`, `description`, `inputSchema`,
 * `outputSchema`, `annotations`; `title`, `outputSchema` and `annotations` only when present, so that the pin
 * of a tool without them is the one earlier releases took.
 */
function definitionOf(tool: Record<string, unknown>): Definition {
  const def: Definition = { name: tool.name, description: tool.description, inputSchema: tool.inputSchema };
  for (const field of ['title', 'outputSchema', 'annotations'] as const) {
    if (tool[field] !== undefined) def[field] = tool[field];
  }
  return def;
}

/**
 * The pin of one listed tool: base64url SHA-256 of the RFC 8785 canonical JSON of `{ name, title?,
 * description, inputSchema, outputSchema?, annotations? }` (an absent member is left out, as JSON leaves out
 * `undefined`).
 * @throws TypeError when the definition is not JSON
 */
export function pinOf(tool: Record<string, unknown>): string {
  return sha256b64url(canonicalJson(definitionOf(tool)));
}

/**
 * Checks a pin set given as `{ pin }`.
 * @throws TypeError with `err.option` `'pin'` when it is malformed or of another version
 */
export function readPinSet(scope: string, value: unknown): McpPinSet {
  const bad = (why: string): never => optionError(scope, 'pin', why);
  if (!isObject(value) || Array.isArray(value)) return bad('expected true or a pin set from pepPins()');
  for (const key of Object.keys(value)) {
    if (key !== 'version' && key !== 'server' && key !== 'tools') bad('a pin set has only version, server and tools');
  }
  if (value.version !== 1) bad('a pin set of another version');
  const server = value.server;
  if (!isObject(server) || typeof server.name !== 'string' || server.name === '' || typeof server.version !== 'string')
    bad('server must be { name, version }');
  const tools = value.tools;
  if (!isObject(tools) || Array.isArray(tools)) return bad('tools must be an object of name -> sha256');
  const seen = new Set<string>();
  const out: Record<string, string> = {};
  for (const [name, sha] of Object.entries(tools)) {
    const norm = normalizedName(name);
    if (norm === undefined) bad('a pinned tool name normalizes to nothing');
    if (seen.has(norm as string)) bad('two pinned tool names normalize alike');
    if (typeof sha !== 'string' || !SHA.test(sha)) bad('each pin must be a base64url SHA-256 (43 characters)');
    seen.add(norm as string);
    out[name] = sha as string;
  }
  const s = server as { name: string; version: string };
  return { version: 1, server: { name: s.name, version: s.version }, tools: out };
}

interface Pin {
  name: string;
  sha: string;
  /** The definition, when this process saw it (so a change can name its field). */
  def?: Definition;
}

/** The pins of one guarded client, and what the last list said of each tool. */
export class PinBook {
  readonly #pins = new Map<string, Pin>();
  readonly #allowNew: boolean;
  #server: { name: string; version: string } | undefined;
  /** Whether the pins were given (a pin set) or are still to be taken at the first list. */
  #taken: boolean;
  /** Normalized name -> status at the last list; undefined until a list was checked (or after list_changed). */
  #status: Map<string, PinStatus> | undefined;
  /** Whether the list being checked (all its pages) is the one that takes the pins. */
  #takingList = false;

  constructor(given: McpPinSet | undefined, allowNew: boolean) {
    this.#allowNew = allowNew;
    this.#taken = given !== undefined;
    if (given) {
      this.#server = { ...given.server };
      for (const [name, sha] of Object.entries(given.tools)) {
        this.#pins.set(normalizedName(name) as string, { name, sha });
      }
    }
  }

  /** Whether the last list's statuses are current (false before the first list and after list_changed). */
  get current(): boolean {
    return this.#status !== undefined;
  }

  /** Forgets the statuses: a `notifications/tools/list_changed` arrived. */
  invalidate(): void {
    this.#status = undefined;
  }

  /**
   * Checks the server the client is connected to against the pin set's.
   * @throws TypeError with `err.option` `'pin'` when the pin set is for another server (name differs)
   */
  checkServer(scope: string, server: { name?: unknown; version?: unknown } | undefined): void {
    if (server === undefined || typeof server.name !== 'string') return;
    if (this.#server === undefined) {
      this.#server = { name: server.name, version: typeof server.version === 'string' ? server.version : '' };
    } else if (this.#server.name !== server.name) {
      optionError(scope, 'pin', 'the pin set is for another server');
    }
  }

  /**
   * Checks a whole list (every page): each tool's status. The first list of `{ pin: true }` takes the
   * pins; with `allowNew`, a tool not pinned is pinned at first sight.
   */
  check(tools: readonly Record<string, unknown>[], continuing = false): void {
    // A later page of a paginated list adds to the statuses of the first.
    const status = continuing && this.#status ? this.#status : new Map<string, PinStatus>();
    const byName = new Map<string, Record<string, unknown>[]>();
    for (const tool of tools) {
      const norm = normalizedName(tool.name);
      if (norm === undefined) continue;
      const list = byName.get(norm);
      if (list) list.push(tool);
      else byName.set(norm, [tool]);
    }
    if (!continuing || this.#status === undefined) this.#takingList = !this.#taken;
    const taking = this.#takingList;
    for (const [norm, same] of byName) {
      if (same.length > 1) {
        status.set(norm, { kind: 'ambiguous' });
        continue;
      }
      const tool = same[0] as Record<string, unknown>;
      let sha: string;
      try {
        sha = pinOf(tool);
      } catch {
        status.set(norm, { kind: 'changed', field: undefined });
        continue;
      }
      const pin = this.#pins.get(norm);
      if (pin === undefined) {
        if (taking || this.#allowNew) {
          this.#pins.set(norm, { name: tool.name as string, sha, def: definitionOf(tool) });
          status.set(norm, { kind: 'ok' });
        } else status.set(norm, { kind: 'new' });
      } else if (pin.sha === sha) {
        pin.def ??= definitionOf(tool);
        status.set(norm, { kind: 'ok' });
      } else {
        const field = changedField(pin.def, definitionOf(tool)) ?? (pin.name !== tool.name ? 'name' : undefined);
        status.set(norm, { kind: 'changed', field });
      }
    }
    this.#taken = true;
    this.#status = status;
  }

  /** What the last list said of a tool; a tool it did not list is `new` (not pinned) or `changed` (gone). */
  statusOf(name: string): PinStatus {
    const norm = normalizedName(name);
    if (norm === undefined) return { kind: 'new' };
    const s = this.#status?.get(norm);
    if (s !== undefined) return s;
    return this.#pins.has(norm) ? { kind: 'changed', field: undefined } : { kind: 'new' };
  }

  /** The pin of a tool the last list showed as pinned and unchanged, else undefined. */
  shaOf(name: string): string | undefined {
    if (this.statusOf(name).kind !== 'ok') return undefined;
    const norm = normalizedName(name);
    return norm === undefined ? undefined : this.#pins.get(norm)?.sha;
  }

  /** The pin set as plain JSON (tools sorted by name, for a reviewable diff). */
  toJSON(): McpPinSet {
    const tools: Record<string, string> = {};
    const pins = [...this.#pins.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const pin of pins) tools[pin.name] = pin.sha;
    return { version: 1, server: { ...(this.#server ?? { name: '', version: '' }) }, tools };
  }
}

/** The first pinned member whose canonical JSON differs, when the old definition was seen. */
function changedField(before: Definition | undefined, after: Definition): string | undefined {
  if (before === undefined) return undefined;
  for (const field of PINNED_FIELDS) {
    const a = before[field] === undefined ? undefined : canonicalJson(before[field]);
    const b = after[field] === undefined ? undefined : canonicalJson(after[field]);
    if (a !== b) return field;
  }
  return undefined;
}

/** The text of a `tool_changed` refusal: names the tool and, when known, the field that changed. */
export function toolChangedMessage(name: string, status: PinStatus): string {
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
