/**
 * What a guarded MCP `Client` offers the model (docs/visibility.md): `tools/list` answers filtered by
 * the pins (a changed or unpinned tool is hidden) and by `pep.visibleTools` (a tool the policy blocks
 * is hidden), and the pin check of each `tools/call` (a `tool_changed` refusal). Internal to `agent-pep/mcp`.
 * @internal
 */
import type { VisibleToolsOptions } from '../../core/visibility.js';
import { synthesizeBlock } from '../../decision.js';
import { kernelOf } from '../../enforce/registry.js';
import { toolMessage } from '../../errors.js';
import type { Pep } from '../../pep.js';
import { isObject, refusal, type ToolResult } from './common.js';
import { type McpPinSet, PinBook, toolChangedMessage } from './pins.js';

/** Most pages one re-check reads (a server that pages forever is refused). */
const MAX_PAGES = 100;

/** The tool surface of one guarded client. */
export interface ToolSurface {
  /**
   * A `tools/list` result the host asked for, filtered (pins, then visibility); `continuing` when the host
   * asked for a page after the first (a `cursor`). A filtered list of protocol 2026-07-28 (one that has a
   * `cacheScope`) is marked `cacheScope: "private"`: it is what this session may see (CONTRACT section 16).
   */
  filterList(result: unknown, continuing: boolean, options: unknown): Promise<unknown>;
  /** A `tool_changed` refusal for a call the pins refuse, else undefined (the call goes on to the PDP). */
  refuseCall(name: string, options: unknown): Promise<ToolResult | undefined>;
  /** The pin set (`pepPins()`), or undefined without `pin`. */
  pins(): McpPinSet | undefined;
  /** The pin a call to `name` is decided against (after `refuseCall` let it through), or undefined without `pin`. */
  pinOf(name: string): string | undefined;
  /**
   * The `inputSchema` the server lists for `name`: from the last `tools/list` seen, else the whole list
   * read once now (every page). Undefined for a tool the server does not list.
   * @throws what the SDK throws when the list cannot be read
   */
  inputSchemaOf(name: string, options: unknown): Promise<unknown>;
  /** Whether the last list seen gives `name` an `outputSchema` (the SDK then needs `structuredContent` or `isError`). */
  hasOutputSchema(name: string): boolean;
  /** A `notifications/tools/list_changed` arrived: the pins are checked again (a no-op without `pin`). */
  listChanged(): void;
}

/** What the surface needs of the route that guards (the client's methods, or its transport). */
export interface SurfaceDeps {
  scope: string;
  pep: Pep;
  /**
   * Reads one page of the server's tool list, unfiltered: `{ cursor }` for a page after the first.
   * @throws what the SDK or the server answers when the list cannot be read
   */
  readPage(params: { cursor: string } | undefined, options: unknown): Promise<unknown>;
  /** The server's `{ name, version }` as its `initialize` (or `server/discover`) answer gave it, else undefined. */
  server(): { name?: unknown; version?: unknown } | undefined;
  hideBlocked: boolean;
  pin: McpPinSet | true | undefined;
  allowNew: boolean;
  /** The guard's session, else undefined (the Pep's). */
  session: string | undefined;
}

/** A `tool_changed` refusal, observed by the Pep's `onDecision` and telemetry like any synthesized BLOCK. */
function toolChanged(pep: Pep, name: string, message: string): ToolResult {
  const kernel = kernelOf(pep);
  if (kernel !== undefined)
    return refusal(kernel.refuse({ stage: 'action', tool: name }, 'tool_changed', message).toolMessage);
  // not a client from createPep (a wrapper): nobody to observe the refusal
  const decision = synthesizeBlock('action', globalThis.crypto.randomUUID(), 'tool_changed', message, 0);
  return refusal(toolMessage(decision, name));
}

/** The guard's session, else the Pep's (never the transport's: a server sets `sessionId`). */
function callOptions(session: string | undefined, options: unknown): VisibleToolsOptions {
  const out: VisibleToolsOptions = {};
  if (session !== undefined) out.session = session;
  if (isObject(options) && options.signal instanceof AbortSignal) out.signal = options.signal;
  return out;
}

/** The listed tools of a `tools/list` result (objects with a string name), or undefined for anything else. */
function toolsOf(result: unknown): Record<string, unknown>[] | undefined {
  if (!isObject(result) || !Array.isArray(result.tools)) return undefined;
  return result.tools.filter((t): t is Record<string, unknown> => isObject(t) && typeof t.name === 'string');
}

/** Records each listed tool's `inputSchema` of a `tools/list` result, and whether it has an `outputSchema`. */
function rememberSchemas(schemas: Map<string, unknown>, outputs: Set<string>, result: unknown): void {
  for (const t of toolsOf(result) ?? []) {
    schemas.set(t.name as string, t.inputSchema);
    if (t.outputSchema !== undefined) outputs.add(t.name as string);
    else outputs.delete(t.name as string);
  }
}

/** The tools `pep.visibleTools` shows for the client's session (docs/visibility.md). */
async function visibleOnly(
  pep: Pep,
  session: string | undefined,
  tools: Record<string, unknown>[],
  options: unknown,
): Promise<Record<string, unknown>[]> {
  if (tools.length === 0) return tools;
  const names = tools.map((t) => t.name as string);
  const visible = new Set(await pep.visibleTools(names, callOptions(session, options)));
  return tools.filter((t) => visible.has(t.name as string));
}

/**
 * Reads the whole tool list, page by page (at most `MAX_PAGES`), through the SDK's own request, giving
 * each page to `onPage` (`continuing`: a page after the first); true when the list ended, false when
 * it had more pages than that.
 */
async function readPages(
  deps: SurfaceDeps,
  options: unknown,
  onPage: (result: unknown, continuing: boolean) => void,
): Promise<boolean> {
  let cursor: unknown;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await deps.readPage(typeof cursor === 'string' ? { cursor } : undefined, options);
    onPage(result, page > 0);
    cursor = isObject(result) ? result.nextCursor : undefined;
    if (typeof cursor !== 'string') return true;
  }
  return false;
}

/** Makes the tool surface of a guarded client. */
export function makeToolSurface(deps: SurfaceDeps): ToolSurface {
  const { scope, pep, hideBlocked, allowNew } = deps;
  const book = deps.pin === undefined ? undefined : new PinBook(deps.pin === true ? undefined : deps.pin, allowNew);
  const serverOf = () => deps.server();
  if (book) book.checkServer(scope, serverOf());

  /** Each listed tool's `inputSchema` from every list read (the host's and our own); whether a whole list was read. */
  const schemas = new Map<string, unknown>();
  const outputs = new Set<string>();
  let listedWhole = false;
  const remember = (result: unknown): void => rememberSchemas(schemas, outputs, result);
  let refreshing: Promise<void> | undefined;
  /** Reads the whole list (every page) through the SDK's own request and checks it against the pins. */
  function refresh(options: unknown): Promise<void> {
    refreshing ??= (async () => {
      try {
        const whole = await readPages(deps, options, (result, continuing) => {
          checkPage(result, continuing);
          remember(result);
        });
        if (whole) listedWhole = true;
        else book?.invalidate();
      } finally {
        refreshing = undefined;
      }
    })();
    return refreshing;
  }

  const checkPage = (result: unknown, continuing: boolean): void =>
    book?.checkServer(scope, serverOf()) ?? book?.check(toolsOf(result) ?? [], continuing);

  return {
    async filterList(result, continuing, options) {
      remember(result);
      let tools = toolsOf(result);
      if (tools === undefined || !isObject(result)) return result;
      if (book) {
        checkPage(result, continuing);
        tools = tools.filter((t) => book.statusOf(t.name as string).kind === 'ok');
      }
      if (hideBlocked) tools = await visibleOnly(pep, deps.session, tools, options);
      const out: Record<string, unknown> = { ...result, tools };
      // What this session may see is not what another may: a 2026-07-28 client must not share it.
      if ((book || hideBlocked) && 'cacheScope' in result) out.cacheScope = 'private';
      return out;
    },
    async refuseCall(name, options) {
      if (!book) return undefined;
      if (!book.current) {
        try {
          await refresh(options);
        } catch (err) {
          if (err instanceof TypeError && (err as { option?: unknown }).option === 'pin') throw err;
          return toolChanged(pep, name, 'the tool list could not be read to check the pins');
        }
      }
      const status = book.statusOf(name);
      return status.kind === 'ok' ? undefined : toolChanged(pep, name, toolChangedMessage(name, status));
    },

    pins: () => book?.toJSON(),
    hasOutputSchema: (name) => outputs.has(name),
    listChanged() {
      if (!book) return;
      book.invalidate();
      // The re-check now; a call before it ends waits for its own (refresh is shared).
      refresh(undefined).catch(() => undefined);
    },
    pinOf: (name) => book?.shaOf(name),
    async inputSchemaOf(name, options) {
      if (!schemas.has(name) && !listedWhole) await refresh(options);
      return schemas.get(name);
    },
  };
}
