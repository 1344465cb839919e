/**
 * Client options, the one frozen DEFAULTS object, and synchronous validation (TypeError).
 * @packageDocumentation
 */
import type { Dispatcher } from 'undici';
import type { IntentGrant, PolicyDecision, Stage } from '../decision.js';
import { joinUrl, trimTrailingSlashes } from '../internal/url.js';
import type { PermitsOptions } from '../permit/verifier.js';
import { type TelemetryOption, validateTelemetry } from '../telemetry.js';
import type { FetchFunction } from '../transport/fetch.js';
import { DEFAULTS } from './defaults.js';
import { type CompiledInterceptor, type Interceptor, validateInterceptors } from './interceptors.js';
import { booleanOption, integerOption, msOption, nonEmptyStringOption, optionError, refuseUnknownKeys } from './kit.js';

export type { PermitKeySource } from '../permit/keys.js';

export type { PermitsOptions } from '../permit/verifier.js';

/**
 * The decision an observer sees: only the fields listed here (an allow-list, docs/telemetry.md "What `onDecision` observers see");
 * a permit, transformed args or content, a substitute result and any field not listed never reach it.
 */
export type ObservedDecision = Pick<
  PolicyDecision,
  | 'verdict'
  | 'stage'
  | 'requestId'
  | 'decisionId'
  | 'reason'
  | 'latches'
  | 'sessionLabels'
  | 'escalationId'
  | 'simulated'
  | 'synthesized'
  | 'interceptor'
  | 'route'
>;

/** What an `onDecision` observer sees after every decision (never content, args or the permit). */
export interface DecisionEvent {
  /** The stage decided. */
  stage: Stage;
  /** The id sent to the PDP. */
  requestId: string;
  /** The decision's allow-listed fields ({@link ObservedDecision}): never a permit, args, content or a substitute result. */
  decision: ObservedDecision;
  /** Time from the call to the decision, in milliseconds. */
  latencyMs: number;
  /** HTTP attempts made (0 when none was sent). */
  attempts: number;
  /** The tool name as proposed, for `action`. */
  tool?: string;
  /** The local interceptor that decided (`deny`, `substitute`, or a failure), when one did (docs/interceptors.md). */
  interceptor?: string;
}

/**
 * What a sandbox runner gets: the routed action as it was decided (docs/interceptors.md, "Routes to a
 * sandbox"). It runs in place of the tool's own body; its result goes on as the tool's would (`after`
 * interceptors, `checkResult`).
 */
export interface SandboxCall {
  /** The tool name as guarded (not normalized). */
  tool: string;
  /** The args that were decided and that the permit binds (`transformedArgs` or the snapshot). */
  args: Record<string, unknown>;
  /** The route's profile, when the interceptor or the PDP named one. */
  profile: string | undefined;
  /** The verified permit, for a sandbox that presents it on (undefined only with `permits: false`). */
  permitId: string | undefined;
  /** The decision (a WARN carrying the route). */
  decision: PolicyDecision;
  /** The caller's signal, if any: a runner should stop the sandbox when it fires. */
  signal: AbortSignal | undefined;
}

/** Runs a routed action in a sandbox (a local process, a container, E2B, Daytona, ...) and resolves with its result. */
export type SandboxRunner = (call: SandboxCall) => unknown;

/** Options of {@link createPep}. */
export interface PepOptions {
  /**
   * Base URL of the PDP (`http:` or `https:`); decisions go to `POST {pdpUrl}/api/policy/authorize`, or
   * with `protocol: 'authzen'` to `POST {pdpUrl}/access/v1/evaluation` and `/access/v1/evaluations`.
   */
  pdpUrl: string | URL;
  /**
   * The wire: `'agent-pep'` (docs/fail-closed.md) or `'authzen'`, the OpenID AuthZEN Authorization
   * API 1.0 that Cerbos, OpenFGA, Keycloak and others serve (docs/authzen.md). @defaultValue 'agent-pep'
   */
  protocol?: 'agent-pep' | 'authzen';
  /**
   * With `protocol: 'authzen'`: read the endpoints from `GET {pdpUrl}/.well-known/authzen-configuration`
   * (once, on the first decision). A document whose `policy_decision_point` is not `pdpUrl`, or whose
   * endpoints are on another origin, is discarded: every decision is then BLOCK `pdp_unreachable`.
   * @defaultValue false
   */
  discover?: boolean;
  /** This agent's id, sent as `agentId` and expected as the permit's `sub`. Non-empty. */
  agentId: string;
  /** The default session id, sent as `session` and expected as the permit's `sid`. Non-empty. */
  session: string;
  /** Sent as `authorization: Bearer <apiKey>` when set. Never logged. */
  apiKey?: string | undefined;
  /** Total deadline of one decision, retries and backoff included, in milliseconds. @defaultValue 2000 */
  timeoutMs?: number;
  /** Deadline of one HTTP attempt, in milliseconds; a retryable failure. @defaultValue `timeoutMs` */
  attemptTimeoutMs?: number;
  /** Extra attempts after the first, for transient failures only. @defaultValue 2 */
  retries?: number;
  /** Largest response body accepted, in bytes. @defaultValue 65536 */
  maxResponseBytes?: number;
  /**
   * How to check permits: `{ keys, issuer, algorithms? }`, or `false` to opt out explicitly
   * (then `guardTool` can still be created but no permit is verified). With `protocol: 'authzen'`,
   * `false` also lets an action ALLOW come without a permit (a PDP that mints none): the service can
   * then no longer refuse a call that skipped the PEP. @defaultValue undefined
   */
  permits?: PermitsOptions | false;
  /** Send every request as simulated (dry run; nothing can be enforced). @defaultValue false */
  simulated?: boolean;
  /**
   * How requests reach the PDP (docs/runtimes.md): `'undici'`, a keep-alive pool of undici (Node, Deno,
   * Bun), or `'fetch'`, the runtime's own `fetch` (Cloudflare Workers, Vercel Edge, Deno, Bun). Every
   * fail-closed rule holds on both. `'undici'` where undici cannot load is a TypeError.
   * @defaultValue undici where it loads (or with a `dispatcher`), else fetch
   */
  transport?: 'undici' | 'fetch';
  /**
   * The `fetch` the `'fetch'` transport calls (a test double, a runtime's binding); giving one selects
   * that transport. @defaultValue `globalThis.fetch`
   */
  fetch?: FetchFunction;
  /** An undici Dispatcher to send requests through instead of the client's own pool (transport `'undici'` only). */
  dispatcher?: Dispatcher;
  /** Most connections the client's own undici pool opens to the PDP (not with `'fetch'`). @defaultValue unlimited */
  connections?: number;
  /**
   * With `true`, a response must echo the request id (body `requestId` or header `x-request-id`), else it is
   * `ambiguous_decision`: a stray response on a kept-alive connection can then never answer another decision.
   * Turn it on with any PDP that echoes (the dev PDP always does). @defaultValue false
   */
  requireEcho?: boolean;
  /**
   * Local checks run before the PDP is asked, in registration order (docs/interceptors.md). They can
   * only restrict: deny, substitute, or replace the running value. Names must be unique. @defaultValue []
   */
  interceptors?: Interceptor[];
  /** Observer called after every decision; throwing is contained. */
  onDecision?: (event: DecisionEvent) => void;
  /**
   * Sandbox runners by name (docs/interceptors.md, "Routes to a sandbox"): when an interceptor or the
   * PDP routes an action to `name`, `guardTool` (and the adapters that run tools through it) run
   * `runner` with the decided call, never the tool's body. A route to a name not registered here is a
   * synthesized BLOCK `ambiguous_decision`. Names: 1 to 128 characters. @defaultValue {}
   */
  sandboxes?: Record<string, SandboxRunner>;
  /**
   * OpenTelemetry (docs/telemetry.md): `true` records with the globally registered tracer and
   * meter, `{ tracer?, meter? }` with those given. Needs the optional peer `@opentelemetry/api`, which is
   * loaded only when this is set. @defaultValue undefined (nothing recorded, nothing loaded)
   */
  telemetry?: TelemetryOption | false | undefined;
}

/** Per-call options: the optional last argument of every stage method. */
export interface CallOptions {
  /** Aborting ends the decision at once with BLOCK `aborted`. */
  signal?: AbortSignal | undefined;
  /** Session for this call only (non-empty); defaults to the client's. */
  session?: string | undefined;
  /** Simulate this call (dry run); defaults to the client's `simulated`. */
  simulated?: boolean | undefined;
}

/** Per-call options of an action (`authorizeAction`, a guarded tool): also the pin of the tool's definition. */
export interface ActionCallOptions extends CallOptions {
  /**
   * The SHA-256 (base64url, 43 characters) of the tool definition this call is decided against (an MCP pin,
   * docs/visibility.md), sent in the request (`toolPin`; AuthZEN `context.toolPin`). The dev PDP names it in
   * the permit (`tool_pin` claim) and binds an escalation's approval to it (CONTRACT section 16). A value
   * that is not 43 base64url characters is a synthesized BLOCK `invalid_request`.
   * @defaultValue undefined (no pin named)
   */
  toolPin?: string | undefined;
}

/** One tool call of `authorizeActions`: the tool name as proposed and its args, as `authorizeAction` takes them. */
export interface ActionCall {
  /** The tool name as the agent proposed it (at most 256 characters). */
  tool: string;
  /** The call's arguments: a plain object of JSON values (snapshotted before sending). */
  args: Record<string, unknown>;
}

/** Per-call options of `checkInput`: also the grants the application's own extractor proposed. */
export interface InputCallOptions extends CallOptions {
  /**
   * What the user asked for, as the application's own extractor read it from the user's turn (for example
   * a model with constrained JSON output that saw only that turn): at most 16 {@link IntentGrant}s, sent
   * in the request (docs/dev-pdp.md, "Intent grants"). Checked for shape before sending (a bad one is a
   * synthesized BLOCK `invalid_request`); the PDP checks them against its policy and keeps them only when
   * the step's final verdict is ALLOW or WARN and its policy takes an application's grants.
   */
  intent?: IntentGrant[] | undefined;
}

/** Per-call options of `checkContextEgress`: also the tool whose result the content is. */
export interface EgressCallOptions extends CallOptions {
  /** The tool whose result this content is, sent as `tool` (the PDP matches latches on it). */
  tool?: string | undefined;
}

export { DEFAULTS } from './defaults.js';

/** Options after validation and defaults. @internal */
export interface ResolvedOptions {
  origin: string;
  path: string;
  /** `pdpUrl` as parsed (the AuthZEN `policy_decision_point` it must match). */
  pdp: URL;
  /** The path of `pdpUrl`, without a trailing `/`. */
  base: string;
  protocol: 'agent-pep' | 'authzen';
  discover: boolean;
  agentId: string;
  session: string;
  apiKey: string | undefined;
  timeoutMs: number;
  attemptTimeoutMs: number;
  retries: number;
  maxResponseBytes: number;
  permits: PermitsOptions | false | undefined;
  simulated: boolean;
  /** The transport asked for; undefined: undici where it loads, else fetch (`core/shared.ts`). */
  transport: 'undici' | 'fetch' | undefined;
  fetch: FetchFunction | undefined;
  dispatcher: Dispatcher | undefined;
  connections: number | undefined;
  requireEcho: boolean;
  interceptors: readonly CompiledInterceptor[];
  onDecision: ((event: DecisionEvent) => void) | undefined;
  telemetry: TelemetryOption | undefined;
  sandboxes: ReadonlyMap<string, SandboxRunner>;
}

const SCOPE = 'createPep';

/** The `sandboxes` option: names (1 to 128 characters) to runner functions. @throws TypeError */
function readSandboxes(raw: unknown): ReadonlyMap<string, SandboxRunner> {
  const out = new Map<string, SandboxRunner>();
  if (raw === undefined) return out;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    optionError(SCOPE, 'sandboxes', 'expected an object of runner functions by name');
  }
  for (const [name, runner] of Object.entries(raw)) {
    const path = `sandboxes.${name.slice(0, 40)}`;
    if (name.length > 128 || !name.isWellFormed()) optionError(SCOPE, path, 'a sandbox name is 1 to 128 characters');
    if (typeof runner !== 'function') optionError(SCOPE, path, 'expected a runner function');
    out.set(name, runner as SandboxRunner);
  }
  return out;
}

function fail(path: string, problem: string): never {
  optionError(SCOPE, path, problem);
}

const nonEmptyString = (v: unknown, name: string): string => nonEmptyStringOption(SCOPE, name, v);
const positiveInt = (v: unknown, name: string, dflt: number, allowZero = false): number =>
  integerOption(SCOPE, name, v, dflt, allowZero ? 0 : 1);
/** A millisecond option: the kit's one rule (1 to 600000). */
const duration = (v: unknown, name: string, dflt: number): number => msOption(SCOPE, name, v, dflt);
const optionalBoolean = (v: unknown, name: string, dflt: boolean): boolean => booleanOption(SCOPE, name, v, dflt);

const KNOWN_OPTIONS: ReadonlySet<string> = new Set([
  'pdpUrl',
  'protocol',
  'discover',
  'agentId',
  'session',
  'apiKey',
  'timeoutMs',
  'attemptTimeoutMs',
  'retries',
  'maxResponseBytes',
  'permits',
  'simulated',
  'transport',
  'fetch',
  'dispatcher',
  'connections',
  'requireEcho',
  'interceptors',
  'onDecision',
  'telemetry',
  'sandboxes',
]);

const KNOWN_PERMITS_OPTIONS: ReadonlySet<string> = new Set(['keys', 'issuer', 'algorithms', 'clockToleranceSec']);

/**
 * The transport options: `transport`, `fetch`, `dispatcher` and `connections`, and the pairs that
 * cannot go together (a dispatcher or a pool size is undici's; a `fetch` is the fetch transport's).
 * @throws TypeError with `option` naming the first bad one
 */
function resolveTransport(
  options: PepOptions,
): Pick<ResolvedOptions, 'transport' | 'fetch' | 'dispatcher' | 'connections'> {
  const { transport, fetch, dispatcher: d } = options;
  if (transport !== undefined && transport !== 'undici' && transport !== 'fetch') {
    fail('transport', "expected 'undici' or 'fetch'");
  }
  if (fetch !== undefined && typeof fetch !== 'function') fail('fetch', 'expected a fetch function');
  if (fetch !== undefined && transport === 'undici') fail('fetch', "only with transport: 'fetch'");
  const onFetch = transport === 'fetch' || fetch !== undefined;
  if (d !== undefined && (typeof d !== 'object' || d === null || typeof (d as Dispatcher).dispatch !== 'function')) {
    fail('dispatcher', 'expected an undici Dispatcher');
  }
  if (d !== undefined && onFetch) fail('dispatcher', "an undici Dispatcher is not used by transport: 'fetch'");
  const connections =
    options.connections === undefined ? undefined : positiveInt(options.connections, 'connections', 1);
  if (connections !== undefined && onFetch) fail('connections', "the pool size is undici's, not fetch's");
  return { transport: onFetch ? 'fetch' : transport, fetch, dispatcher: d, connections };
}

/**
 * Validates options and applies {@link DEFAULTS}. `permits` is checked further by the permit checker,
 * which `createPep` builds at once (one set of rules, in `src/permit/`).
 * @returns one frozen config, read by every step of the client
 * @throws TypeError with `option` naming the first bad or unknown option (never its value, which may be a secret)
 * @internal
 */
export function resolveOptions(options: PepOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) fail('(options)', 'expected an object');
  refuseUnknownKeys(SCOPE, options, KNOWN_OPTIONS);
  const raw = options.pdpUrl;
  if (typeof raw !== 'string' && !(raw instanceof URL)) fail('pdpUrl', 'expected an http(s) URL');
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    fail('pdpUrl', 'not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail('pdpUrl', 'must be http: or https:');
  if (url.username !== '' || url.password !== '') fail('pdpUrl', 'must not carry credentials; use apiKey');
  if (url.search !== '' || url.hash !== '') fail('pdpUrl', 'must not have a query or fragment');
  const base = trimTrailingSlashes(url.pathname);
  const protocol = options.protocol ?? DEFAULTS.protocol;
  if (protocol !== 'agent-pep' && protocol !== 'authzen') fail('protocol', "expected 'agent-pep' or 'authzen'");
  const discover = optionalBoolean(options.discover, 'discover', DEFAULTS.discover);
  if (discover && protocol !== 'authzen') fail('discover', "only with protocol: 'authzen'");
  const agentId = nonEmptyString(options.agentId, 'agentId');
  const session = nonEmptyString(options.session, 'session');
  let apiKey: string | undefined;
  if (options.apiKey !== undefined) {
    if (typeof options.apiKey !== 'string' || options.apiKey.length === 0)
      fail('apiKey', 'expected a non-empty string');
    if (!/^[\x21-\x7e]+$/.test(options.apiKey)) fail('apiKey', 'must be printable ASCII without spaces');
    apiKey = options.apiKey;
  }
  const timeoutMs = duration(options.timeoutMs, 'timeoutMs', DEFAULTS.timeoutMs);
  const attemptTimeoutMs = duration(options.attemptTimeoutMs, 'attemptTimeoutMs', timeoutMs);
  const retries = positiveInt(options.retries, 'retries', DEFAULTS.retries, true);
  if (retries > 10) fail('retries', 'at most 10');
  const maxResponseBytes = positiveInt(options.maxResponseBytes, 'maxResponseBytes', DEFAULTS.maxResponseBytes);
  let permits: PermitsOptions | false | undefined;
  if (options.permits === false || options.permits === undefined) permits = options.permits;
  else if (typeof options.permits !== 'object' || options.permits === null)
    fail('permits', 'expected { keys, issuer } or false');
  else {
    refuseUnknownKeys(SCOPE, options.permits, KNOWN_PERMITS_OPTIONS, 'permits');
    permits = options.permits;
  }
  const simulated = optionalBoolean(options.simulated, 'simulated', DEFAULTS.simulated);
  const { transport, fetch, dispatcher: d, connections } = resolveTransport(options);
  const requireEcho = optionalBoolean(options.requireEcho, 'requireEcho', DEFAULTS.requireEcho);
  const interceptors = validateInterceptors(options.interceptors, (path, problem) => fail(path, problem));
  if (options.onDecision !== undefined && typeof options.onDecision !== 'function')
    fail('onDecision', 'expected a function');
  const sandboxes = readSandboxes(options.sandboxes);
  return Object.freeze({
    sandboxes,
    origin: url.origin,
    path: joinUrl(base, protocol === 'authzen' ? '/access/v1/evaluation' : '/api/policy/authorize'),
    pdp: url,
    base,
    protocol,
    discover,
    agentId,
    session,
    apiKey,
    timeoutMs,
    attemptTimeoutMs,
    retries,
    maxResponseBytes,
    permits,
    simulated,
    transport,
    fetch,
    dispatcher: d,
    connections,
    requireEcho,
    interceptors,
    onDecision: options.onDecision,
    telemetry: validateTelemetry(options.telemetry, fail),
  });
}
