/**
 * The client pipeline, composed: options resolved once into one frozen config, the shared state
 * (`shared.ts`), and the five stage methods, each one step a file: call options and request
 * (`request.ts`, `step.ts`) -> interceptors -> exchange (deadline, attempts, retries) -> transport ->
 * wire -> enforceability -> decision -> observers. The guard helpers are added above, in `src/pep.ts`.
 * @packageDocumentation
 */

import type { PolicyDecision, Stage } from '../decision.js';
import type {
  ActionCall,
  CallOptions,
  EgressCallOptions,
  InputCallOptions,
  PepOptions,
  SandboxRunner,
} from '../options/pep.js';
import { resolveOptions } from '../options/pep.js';
import type { PermitChecker } from '../permit/verifier.js';
import { decideAll } from './batch.js';
import { runDecision, runStep } from './decide.js';
import { type AwaitResolutionOptions, awaitResolution, type EscalationWait } from './escalation-wait.js';
import type { Outcome } from './exchange.js';
import type { CompiledInterceptor } from './interceptors.js';
import { observe } from './observe.js';
import { type CallContext, isSessionId, type Payload, type Snapshot } from './request.js';
import { createShared, permitChecker, type Shared } from './shared.js';
import { type Bound, callOptions } from './step.js';
import { type VisibleToolsOptions, visibleTools } from './visibility.js';

/**
 * What the guard helpers are built from: one decision with the args that ran, the observer path for
 * the helpers' own refusals, the permit checker and the `after` chain. @internal
 */
export interface ClientInternals {
  readonly agentId: string;
  readonly session: string;
  readonly timeoutMs: number;
  /** `undefined` when `permits` is not configured, `'off'` when explicitly `false`. */
  readonly permits: 'on' | 'off' | undefined;
  checker(): PermitChecker;
  /**
   * Reads one call's options once (the session by `sessionOf`: the call's, else this client's), for the
   * enforcement layer to hand to {@link ClientInternals.run}. @throws InvalidRequest on a bad option
   */
  readCall(stage: Stage, rawOpts: unknown): CallContext;
  /** One observed decision, on call options already read. Resolves, never rejects. */
  run(stage: Stage, payload: Payload, call: CallContext, snapshot?: Snapshot): Promise<Outcome>;
  observe(outcome: Outcome, started: number, tool: string | undefined): PolicyDecision;
  readonly after: readonly CompiledInterceptor[];
  /** The `modelRequest` interceptors, in registration order (docs/interceptors.md). */
  readonly modelRequest: readonly CompiledInterceptor[];
  /** The sandbox runners by name (`createPep({ sandboxes })`). */
  readonly sandboxes: ReadonlyMap<string, SandboxRunner>;
}

/** The client pipeline of one session: the five stage methods, `withSession` and `close`. @internal */
export interface CoreClient {
  authorizeAction(tool: string, args: Record<string, unknown>, opts?: CallOptions): Promise<PolicyDecision>;
  authorizeActions(calls: readonly ActionCall[], opts?: CallOptions): Promise<PolicyDecision[]>;
  checkInput(content: string, opts?: InputCallOptions): Promise<PolicyDecision>;
  checkContextEgress(content: string, opts?: EgressCallOptions): Promise<PolicyDecision>;
  checkOutput(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  checkDelivery(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  /** Which tools may be offered (docs/visibility.md). Never rejects. */
  visibleTools(names: readonly string[], opts?: VisibleToolsOptions): Promise<string[]>;
  /** Waits for a reviewer's resolution of an escalation (docs/dev-pdp.md). Never rejects on a PDP failure. */
  awaitResolution(escalationId: string, opts?: AwaitResolutionOptions): Promise<EscalationWait>;
  /** @throws TypeError on an empty id */
  withSession(session: string): CoreClient;
  close(): Promise<void>;
  /** What the guard helpers are built from. */
  readonly internals: ClientInternals;
}

/**
 * Creates the client pipeline: resolves the options once (one frozen config) and builds the shared state.
 * @throws TypeError with `err.option` on a bad option (see `createPep`)
 * @internal
 */
export function createClient(options: PepOptions): CoreClient {
  const shared = createShared(resolveOptions(options));
  return bindClient(shared, shared.opts.session);
}

/** What the guard helpers of one session are built from. */
function internalsOf(b: Bound): ClientInternals {
  const { shared } = b;
  const { opts } = shared;
  return {
    agentId: opts.agentId,
    session: b.session,
    timeoutMs: opts.timeoutMs,
    permits: opts.permits === undefined ? undefined : opts.permits === false ? 'off' : 'on',
    checker: () => permitChecker(shared),
    readCall: (stage, rawOpts) => callOptions(b, rawOpts, stage),
    run: (stage, payload, call, snapshot) => runStep(b, stage, payload, undefined, snapshot, call),
    observe(outcome, started, tool) {
      shared.telemetry?.record(outcome.decision, outcome.attempts, started, tool);
      return observe(opts.onDecision, outcome, started, tool);
    },
    after: shared.chains.action.after,
    sandboxes: opts.sandboxes,
    modelRequest: opts.interceptors.filter((i) => i.modelRequest !== undefined),
  };
}

function bindClient(shared: Shared, session: string): CoreClient {
  const b: Bound = { shared, session };
  const run = (stage: Stage, payload: Payload, rawOpts: unknown): Promise<PolicyDecision> =>
    runDecision(b, stage, payload, rawOpts);
  return {
    authorizeAction: (tool, args, o) => run('action', { tool, args }, o),
    authorizeActions: (calls, o) => decideAll(b, calls, o),
    visibleTools: (names, o) => visibleTools(names, o, (calls, v) => decideAll(b, calls, undefined, v)),
    checkInput: (content, o) => run('input', { content }, o),
    checkContextEgress: (content, o) => run('context_egress', { content }, o),
    checkOutput: (content, o) => run('output', { content }, o),
    checkDelivery: (content, o) => run('delivery', { content }, o),
    awaitResolution: (id, o) => awaitResolution(shared, id, o),
    withSession(id) {
      if (!isSessionId(id)) throw new TypeError('withSession: expected a non-empty session id');
      return bindClient(shared, id);
    },
    async close() {
      shared.ctx.closed = true;
      shared.ctx.inflight.stopAll('closed');
      await shared.ctx.transport.close();
    },
    internals: internalsOf(b),
  };
}
