/**
 * `createPep`: the five stage methods, `guardTool`, `guardText`, `withSession` and `close` (wiring only).
 * Data flows one way: stage method -> interceptors -> request -> transport -> wire validation ->
 * enforceability checks -> decision -> observers.
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import { type PolicyDecision, type Stage, synthesizeBlock, type TextStage } from '../decision.js';
import { type GuardedTool, type GuardToolOptions, makeGuards, type ToolExecutionContext } from '../guard.js';
import { Inflight } from '../internal/inflight.js';
import type { ActionCall, CallOptions, EgressCallOptions, PepOptions, ResolvedOptions } from '../options/pep.js';
import { DEFAULTS, resolveOptions } from '../options/pep.js';
import { createPermitChecker, type PermitChecker } from '../permit/verifier.js';
import { createTelemetry, type DecisionSpan, type Telemetry } from '../telemetry.js';
import { HttpTransport } from '../transport/http.js';
import { VERSION } from '../version.js';
import { discoveredEndpoints, type EndpointSource, fixedEndpoints } from './discovery.js';
import { ABORT_CAUSES, blockOutcome, type DecisionContext, decide, decideBatch, type Outcome } from './exchange.js';
import { type BeforeOutcome, type Chains, chainsByStage, runBefore } from './interceptors.js';
import { observe } from './observe.js';
import {
  baseHeaders,
  type CallContext,
  InvalidRequest,
  isSessionId,
  type Payload,
  type Prepared,
  prepare,
  readCallOptions,
  replaceRunningValue,
  type Snapshot,
} from './request.js';

export type { GuardedTool, GuardToolOptions, ToolExecutionContext } from '../guard.js';

/** The PEP client returned by {@link createPep}. */
export interface Pep {
  /**
   * Asks the PDP whether the tool call may run. Never rejects.
   * @param tool - the tool name as the agent proposed it (sent as is; the PDP normalizes); at most 256 characters
   * @param args - the call's arguments: a plain object of JSON values (snapshotted before sending)
   * @param opts - `{ signal, session, simulated }`
   * @returns the decision; ALLOW/WARN carry `permitId` (not on simulated requests)
   */
  authorizeAction(tool: string, args: Record<string, unknown>, opts?: CallOptions): Promise<PolicyDecision>;
  /**
   * Asks the PDP about several tool calls at once: one decision per call, in order, within one deadline
   * (`timeoutMs`). Never rejects. Over AuthZEN the calls go as one `evaluations` request
   * (`evaluations_semantic: 'execute_all'`, each item with its own `requestId` in its `context`, the
   * request with an `x-request-id` of its own); over the agent-pep protocol, as concurrent single requests.
   * Interceptors run per call and observers see each decision.
   * @param calls - `{ tool, args }[]`, each as {@link Pep.authorizeAction} takes them; a call that is not
   *   valid input is BLOCK `invalid_request` while the others are decided; a non-array resolves `[]`
   * @param opts - `{ signal, session, simulated }`, for every call
   * @returns one {@link PolicyDecision} per call, in the order of `calls`
   * @remarks Each call is decided on its own (docs/authzen.md): an answer that fails any rule of
   * section 3 is BLOCK for its call while the others stand; a batch answer whose count differs from the
   * request's, or an answer that cannot be tied to exactly one call, is BLOCK for every call it could
   * belong to. Calls to the same tool never share one `evaluations` request: a PDP may answer items that
   * look alike as one (Cerbos 0.55 does), so the second call to a tool goes in a second request, and so on,
   * concurrently.
   * @example
   * ```ts
   * const [a, b] = await pep.authorizeActions([
   *   { tool: 'lookup_order', args: { orderId: 'ord_1842' } },
   *   { tool: 'refund_payment', args: { orderId: 'ord_1842', amount: 900 } },
   * ]);
   * ```
   */
  authorizeActions(calls: readonly ActionCall[], opts?: CallOptions): Promise<PolicyDecision[]>;
  /** Checks user input (stage `input`). Never rejects. */
  checkInput(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  /**
   * Checks context about to be sent out to a model (stage `context_egress`). Never rejects.
   * @param opts - also `tool`: the tool whose result this content is (sent as `tool`)
   */
  checkContextEgress(content: string, opts?: EgressCallOptions): Promise<PolicyDecision>;
  /** Checks a model's draft output (stage `output`). Never rejects. */
  checkOutput(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  /** Checks the final message before it is delivered (stage `delivery`). Never rejects. */
  checkDelivery(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  /**
   * Wraps a tool so that it runs only after an ALLOW or WARN whose permit verifies (docs/api.md).
   * An interceptor's `substitute` result is returned without running the tool; `after` interceptors and
   * `checkResult` see the result before it is returned (section 7).
   * @param name - the tool name (at most 256 characters; must normalize to something)
   * @param execute - the side effect; receives the effective args (`transformedArgs` or the snapshot)
   * @param options - `{ checkResult }`
   * @returns `(args, opts?) => Promise<R>`, which throws `PolicyBlockedError` (BLOCK, a failed permit, a
   *   simulated decision, an `after` deny) or `PolicyEscalatedError` (ESCALATE)
   * @throws TypeError at creation when `permits` is not configured (unless `permits: false`), or `name` is bad
   */
  guardTool<R>(
    name: string,
    execute: (args: Record<string, unknown>, ctx: ToolExecutionContext) => R | Promise<R>,
    options?: GuardToolOptions<R>,
  ): GuardedTool<R>;
  /**
   * Checks text at a stage and resolves with the text to use (original on ALLOW, transformed on WARN).
   * @throws PolicyBlockedError on BLOCK (PDP, interceptor or synthesized) or a simulated decision
   * @throws PolicyEscalatedError on ESCALATE
   */
  guardText(stage: TextStage, content: string, opts?: CallOptions): Promise<string>;
  /** A client bound to another session, sharing this client's connection pool. @throws TypeError on an empty id */
  withSession(session: string): Pep;
  /** Releases the connection pool; in-flight and later decisions resolve BLOCK `pdp_unreachable`. */
  close(): Promise<void>;
}

interface Shared {
  readonly opts: ResolvedOptions;
  readonly ctx: DecisionContext;
  readonly headers: Readonly<Record<string, string>>;
  readonly chains: Chains;
  /** AuthZEN: where evaluations go (fixed paths, or the discovery document's). */
  readonly endpoints: EndpointSource | undefined;
  checker: PermitChecker | undefined;
  /** Set only with the `telemetry` option (then `@opentelemetry/api` is loaded). */
  readonly telemetry: Telemetry | undefined;
}

/** The checker, counting each result in `pep.permit.verifications` when telemetry is on. */
function counted(checker: PermitChecker, telemetry: Telemetry | undefined): PermitChecker {
  return telemetry ? { check: (permit, expected) => telemetry.countPermit(checker.check(permit, expected)) } : checker;
}

/** A call ready for the network, or already decided (locally, or because it is not valid input). */
type PreparedStep = { kind: 'decided'; outcome: Outcome } | { kind: 'ready'; p: Prepared };

/**
 * Creates a PEP client that sends every step to the PDP and enforces its verdict, failing closed.
 *
 * @param options - see {@link PepOptions}; `pdpUrl`, `agentId` and `session` are required
 * @returns a {@link Pep} with its own keep-alive connection pool
 * @throws Error naming `@opentelemetry/api` when `telemetry` is set and that package is not installed
 * @throws TypeError synchronously on a bad option, with `err.option` naming its path (missing or
 *   non-http(s) `pdpUrl`, empty `agentId` or `session`, negative or non-integer numbers, a duration past
 *   2^31 - 1 ms, `none`/HMAC permit algorithms, an unknown key at any level, duplicate interceptor names, ...)
 * @remarks The five stage methods never reject. A PDP that is down, slow, answers anything but a
 * valid, enforceable decision (docs/fail-closed.md, rules 1-5; RFC 7493 I-JSON), an interceptor that
 * fails, or a caller's abort yields a synthesized BLOCK with a {@link FailClosedCode}, never an ALLOW.
 * With `protocol: 'authzen'` the same rules hold on the OpenID AuthZEN 1.0 wire (docs/authzen.md):
 * a `decision` that is not a boolean, a profile verdict that contradicts it, or (with `discover: true`)
 * a discovery document for another `policy_decision_point` fails closed too.
 * @example
 * ```ts
 * const pep = createPep({ pdpUrl: 'http://127.0.0.1:8787', agentId: 'support-ai', session: 'sess_demo',
 *   permits: { keys: 'http://127.0.0.1:8787/.well-known/jwks.json', issuer: 'http://127.0.0.1:8787' } });
 * const d = await pep.checkInput('Where is my order?');
 * if (d.verdict === 'BLOCK') console.log(d.synthesized?.code ?? d.reason);
 * await pep.close();
 * ```
 */
export function createPep(options: PepOptions): Pep {
  const opts = resolveOptions(options);
  const transport = new HttpTransport({
    origin: opts.origin,
    path: opts.path,
    maxResponseBytes: opts.maxResponseBytes,
    dispatcher: opts.dispatcher,
    connections: opts.connections,
  });
  const authzen = opts.protocol === 'authzen';
  const ctx: DecisionContext = {
    transport,
    inflight: new Inflight(),
    retries: opts.retries,
    attemptTimeoutMs: opts.attemptTimeoutMs,
    enforce: {
      checkPermitBinding: typeof opts.permits === 'object',
      requireEcho: opts.requireEcho,
      // Section 9: a PDP that mints no permits (AuthZEN with `permits: false`).
      allowWithoutPermit: authzen && opts.permits === false,
    },
    protocol: opts.protocol,
    closed: false,
  };
  const headers = baseHeaders(`agent-pep/${VERSION}`, opts.apiKey);
  const shared: Shared = {
    opts,
    ctx,
    headers,
    chains: chainsByStage(opts.interceptors),
    endpoints: !authzen
      ? undefined
      : opts.discover
        ? discoveredEndpoints(ctx, opts.pdp, opts.base, headers)
        : fixedEndpoints(opts.base),
    checker: undefined,
    telemetry: opts.telemetry === undefined ? undefined : createTelemetry(opts.telemetry, { origin: opts.origin }),
  };
  // Built now so that a bad permits option (key, issuer, algorithms) is a TypeError at construction.
  if (typeof opts.permits === 'object') {
    try {
      shared.checker = counted(createPermitChecker(opts.permits), shared.telemetry);
    } catch (err) {
      if (err instanceof TypeError) {
        const option = (err as TypeError & { option?: unknown }).option;
        (err as TypeError & { option: string }).option =
          typeof option !== 'string' ? 'permits' : option.startsWith('permits') ? option : `permits.${option}`;
      }
      throw err;
    }
  }
  return bindClient(shared, opts.session);
}

function bindClient(shared: Shared, session: string): Pep {
  const { opts, ctx, chains } = shared;

  /**
   * A call up to the network: call options, request, the `before` chain. Never throws, never rejects;
   * without interceptors for the stage it answers at once (no promise on the hot path).
   * @param call - the call options already read (a batch reads them once for all its calls)
   */
  function prepareStep(
    stage: Stage,
    payload: Payload,
    rawOpts: unknown,
    snapshot: Snapshot | undefined,
    deadlineAt: number,
    span?: DecisionSpan,
    call?: CallContext,
  ): PreparedStep | Promise<PreparedStep> {
    const requestId = randomUUID();
    let p: Prepared;
    try {
      const c = call ?? readCallOptions(rawOpts, stage, { session, simulated: opts.simulated });
      p = prepare(stage, payload, c, opts.agentId, requestId, snapshot);
    } catch (err) {
      const message = err instanceof InvalidRequest ? err.message : 'the call could not be turned into a request';
      return { kind: 'decided', outcome: blockOutcome({ stage, requestId }, 'invalid_request', message) };
    }
    if (span) span.tool = p.sent.tool;
    return chains[stage].before.length > 0 ? beforeChain(p, deadlineAt) : { kind: 'ready', p };
  }

  /**
   * The stage's `before` interceptors on a prepared call (section 7). Answers at once when every
   * interceptor did (no promise on the path of synchronous pass-through interceptors); else resolves,
   * never rejects.
   */
  function beforeChain(p: Prepared, deadlineAt: number): PreparedStep | Promise<PreparedStep> {
    if (p.call.signal?.aborted) {
      return { kind: 'decided', outcome: blockOutcome(p.sent, 'aborted', ABORT_CAUSES.caller.message) };
    }
    let r: BeforeOutcome | Promise<BeforeOutcome>;
    try {
      r = runBefore(
        chains[p.sent.stage].before,
        { stage: p.sent.stage, session: p.call.session, tool: p.sent.tool, args: p.sent.args, content: p.req.content },
        { deadlineAt, signal: p.call.signal },
      );
    } catch {
      // Unreachable by design (an interceptor's throw is an outcome); a bug fails closed for this call only.
      return { kind: 'decided', outcome: blockOutcome(p.sent, 'invalid_request', 'internal error') };
    }
    return r instanceof Promise ? r.then((settled) => afterBefore(p, settled)) : afterBefore(p, r);
  }

  /** What a `before` chain's outcome makes of the call: ready (maybe with a replaced value), or decided. */
  function afterBefore(p: Prepared, r: BeforeOutcome): PreparedStep {
    const { stage, requestId } = p.sent;
    const decided = (outcome: Outcome): PreparedStep => ({ kind: 'decided', outcome });
    switch (r.kind) {
      case 'proceed':
        if (r.replaced) {
          try {
            replaceRunningValue(p, r);
          } catch (err) {
            const message = err instanceof InvalidRequest ? err.message : 'an interceptor replacement is not valid';
            return decided(blockOutcome(p.sent, 'invalid_request', message));
          }
        }
        break;
      case 'deny':
      case 'substitute': {
        const decision: PolicyDecision = {
          verdict: 'BLOCK',
          stage,
          requestId,
          reason: r.kind === 'deny' ? r.reason : `answered by interceptor '${r.name}'`,
          interceptor: r.name,
        };
        if (r.kind === 'substitute') decision.substitute = { result: r.result };
        if (p.sent.simulated) decision.simulated = true;
        return decided({ decision, attempts: 0 });
      }
      case 'aborted':
        return decided(blockOutcome(p.sent, 'aborted', ABORT_CAUSES.caller.message));
      default: {
        const why = r.kind === 'timeout' ? 'was still pending at the deadline' : r.why;
        const o = blockOutcome(p.sent, 'interceptor_failed', `interceptor '${r.name}' ${why}`);
        o.decision.interceptor = r.name;
        return decided(o);
      }
    }
    return { kind: 'ready', p };
  }

  /** One prepared call over the network (one evaluation over AuthZEN). Resolves, never rejects. */
  function send(p: Prepared, deadlineAt: number, span?: DecisionSpan): Promise<Outcome> {
    const headers = { ...shared.headers, 'x-request-id': p.sent.requestId };
    if (shared.endpoints) return sendDiscovered(shared.endpoints, p, headers, deadlineAt, span);
    return sendTo(opts.path, p, headers, deadlineAt, span);
  }

  /** One prepared call to `path`, inside the decision's span when there is one. */
  function sendTo(
    path: string,
    p: Prepared,
    headers: Record<string, string>,
    deadlineAt: number,
    span: DecisionSpan | undefined,
  ): Promise<Outcome> {
    if (!span) return decide(ctx, p, headers, deadlineAt, path);
    span.inject(headers);
    return span.run(() => decide(ctx, p, headers, deadlineAt, path));
  }

  /** AuthZEN: the evaluation endpoint (fixed, or from the discovery document), then the call. */
  async function sendDiscovered(
    endpoints: EndpointSource,
    p: Prepared,
    headers: Record<string, string>,
    deadlineAt: number,
    span: DecisionSpan | undefined,
  ): Promise<Outcome> {
    const e = await endpoints(deadlineAt, p.call.signal);
    if (!e.ok) return blockOutcome(p.sent, e.code, e.message, e.attempts, e.status);
    return sendTo(e.value.evaluation, p, headers, deadlineAt, span);
  }

  /**
   * Several prepared action calls: over AuthZEN, in `evaluations` requests none of which holds two
   * calls to one tool (a PDP may answer items that look alike as one): the first call to each tool in
   * the first, the second calls in the next, and so on, at most `DEFAULTS.maxEvaluations` calls a
   * request; a request of one call is a single evaluation.
   * Over the agent-pep protocol, each as a request of its own. All concurrent, within `deadlineAt`.
   */
  async function sendAll(ps: readonly Prepared[], signal: AbortSignal | undefined, deadlineAt: number) {
    const decided: (Outcome | undefined)[] = new Array(ps.length);
    /** Set for each call that went in an `evaluations` request. */
    const batched: (true | undefined)[] = new Array(ps.length);
    const pending: Promise<void>[] = [];
    if (shared.endpoints && ps.length > 1) {
      const e = await shared.endpoints(deadlineAt, signal);
      if (!e.ok) return ps.map((p) => blockOutcome(p.sent, e.code, e.message, e.attempts, e.status));
      const batchPath = e.value.evaluations;
      if (batchPath !== undefined) {
        // Indexes into `ps`: rounds[n] holds each tool's (n+1)th call, in order.
        const rounds: number[][] = [];
        const seen = new Map<string, number>();
        for (let i = 0; i < ps.length; i++) {
          const tool = (ps[i] as Prepared).sent.tool as string;
          const n = seen.get(tool) ?? 0;
          seen.set(tool, n + 1);
          const round = rounds[n];
          if (round) round.push(i);
          else rounds[n] = [i];
        }
        const max = DEFAULTS.maxEvaluations;
        for (const round of rounds) {
          for (let at = 0; at < round.length; at += max) {
            const chunk = round.length <= max ? round : round.slice(at, at + max);
            if (chunk.length < 2) continue; // a lone call goes as a single evaluation, below
            const calls = chunk.map((i) => ps[i] as Prepared);
            for (const i of chunk) batched[i] = true;
            const batchId = randomUUID();
            const headers: Record<string, string> = { ...shared.headers, 'x-request-id': batchId };
            shared.telemetry?.injectActive(headers);
            pending.push(
              decideBatch(ctx, calls, signal, headers, batchId, deadlineAt, batchPath).then((all) => {
                for (let k = 0; k < chunk.length; k++) decided[chunk[k] as number] = all[k];
              }),
            );
          }
        }
      }
    }
    // The single calls go out now, beside the batches (decideBatch and send never reject).
    for (let i = 0; i < ps.length; i++) {
      if (batched[i]) continue;
      pending.push(
        send(ps[i] as Prepared, deadlineAt).then((o) => {
          decided[i] = o;
        }),
      );
    }
    await Promise.all(pending);
    return ps.map(
      (p, i) =>
        decided[i] ??
        // Unreachable by design (a batch decides each of its calls); a bug must still fail closed.
        blockOutcome(p.sent, 'invalid_request', 'internal error: a batch left a call undecided'),
    );
  }

  /** `authorizeActions`: one observed decision per call, in order, within one deadline. */
  async function decideAll(calls: unknown, rawOpts: unknown): Promise<PolicyDecision[]> {
    const started = performance.now();
    const deadlineAt = started + opts.timeoutMs;
    let list: unknown[];
    try {
      list = Array.isArray(calls) ? Array.from(calls as unknown[]) : [];
    } catch {
      list = [];
    }
    const n = list.length;
    const outcomes: Outcome[] = new Array(n);
    const tools: (string | undefined)[] = new Array(n);
    try {
      // The same options for every call: read once (when they are bad, each call reads them and is
      // invalid_request with the reason).
      let call: CallContext | undefined;
      try {
        call = readCallOptions(rawOpts, 'action', { session, simulated: opts.simulated });
      } catch {
        call = undefined;
      }
      const steps: (PreparedStep | Promise<PreparedStep>)[] = new Array(n);
      let waiting = false;
      for (let i = 0; i < n; i++) {
        let payload: Payload;
        try {
          const c = list[i] as { tool?: unknown; args?: unknown } | null | undefined;
          payload = { tool: c?.tool, args: c?.args };
        } catch {
          payload = { tool: undefined, args: undefined };
        }
        tools[i] = typeof payload.tool === 'string' ? payload.tool : undefined;
        const step = prepareStep('action', payload, rawOpts, undefined, deadlineAt, undefined, call);
        if (step instanceof Promise) waiting = true;
        steps[i] = step;
      }
      // Only `before` interceptors that answer with a promise make a step wait.
      const settled = waiting ? await Promise.all(steps) : (steps as PreparedStep[]);
      const ready: Prepared[] = [];
      for (const step of settled) if (step.kind === 'ready') ready.push(step.p);
      const sent = ready.length > 0 ? await sendAll(ready, ready[0]?.call.signal, deadlineAt) : [];
      let next = 0;
      for (let i = 0; i < n; i++) {
        const step = settled[i] as PreparedStep;
        outcomes[i] = step.kind === 'decided' ? step.outcome : (sent[next++] as Outcome);
      }
    } catch {
      // Unreachable by design; a bug must still fail closed.
      for (let i = 0; i < n; i++) {
        outcomes[i] = {
          decision: synthesizeBlock('action', randomUUID(), 'invalid_request', 'internal error', 0),
          attempts: 0,
        };
      }
    }
    const decisions: PolicyDecision[] = new Array(n);
    const { telemetry } = shared;
    for (let i = 0; i < n; i++) {
      const o = outcomes[i] as Outcome;
      telemetry?.record(o.decision, o.attempts, started, tools[i]);
      decisions[i] = observe(opts.onDecision, o, started, tools[i]);
    }
    return decisions;
  }

  /** One observed decision, with the args that were sent (what a permit binds). */
  async function runStep(stage: Stage, payload: Payload, rawOpts: unknown, snapshot?: Snapshot): Promise<Outcome> {
    const started = performance.now();
    const telemetry = shared.telemetry;
    const span = telemetry ? telemetry.start() : undefined;
    let outcome: Outcome;
    try {
      const deadlineAt = started + opts.timeoutMs;
      let step = prepareStep(stage, payload, rawOpts, snapshot, deadlineAt, span);
      if (step instanceof Promise) step = await step;
      outcome = step.kind === 'decided' ? step.outcome : await send(step.p, deadlineAt, span);
    } catch {
      // Unreachable by design; a bug must still fail closed.
      outcome = { decision: synthesizeBlock(stage, randomUUID(), 'invalid_request', 'internal error', 0), attempts: 0 };
    }
    const tool = 'tool' in payload && typeof payload.tool === 'string' ? payload.tool : undefined;
    if (telemetry && span)
      telemetry.end(span, outcome.decision, outcome.attempts, (performance.now() - started) / 1000);
    observe(opts.onDecision, outcome, started, tool);
    return outcome;
  }

  const run = async (stage: Stage, payload: Payload, rawOpts: unknown): Promise<PolicyDecision> =>
    (await runStep(stage, payload, rawOpts)).decision;

  const guards = makeGuards({
    agentId: opts.agentId,
    session,
    timeoutMs: opts.timeoutMs,
    permits: opts.permits === undefined ? undefined : opts.permits === false ? 'off' : 'on',
    checker() {
      if (!shared.checker) {
        if (typeof opts.permits !== 'object') throw new TypeError('permits are not configured');
        shared.checker = counted(createPermitChecker(opts.permits), shared.telemetry);
      }
      return shared.checker;
    },
    run: runStep,
    observe(outcome, started, tool) {
      shared.telemetry?.record(outcome.decision, outcome.attempts, started, tool);
      return observe(opts.onDecision, outcome, started, tool);
    },
    after: chains.action.after,
  });

  return {
    authorizeAction: (tool, args, o) => run('action', { tool, args }, o),
    authorizeActions: (calls, o) => decideAll(calls, o),
    checkInput: (content, o) => run('input', { content }, o),
    checkContextEgress: (content, o) => run('context_egress', { content }, o),
    checkOutput: (content, o) => run('output', { content }, o),
    checkDelivery: (content, o) => run('delivery', { content }, o),
    guardTool: guards.guardTool,
    guardText: guards.guardText,

    withSession(id) {
      if (!isSessionId(id)) throw new TypeError('withSession: expected a non-empty session id');
      return bindClient(shared, id);
    },

    async close() {
      ctx.closed = true;
      ctx.inflight.stopAll('closed');
      await ctx.transport.close();
    },
  };
}
