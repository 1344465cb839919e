/**
 * `createPep`: the five stage methods, `guardTool`, `guardText`, `withSession` and `close` (wiring only).
 * Data flows one way: stage method -> interceptors -> request -> transport -> wire validation ->
 * enforceability checks -> decision -> observers.
 * @packageDocumentation
 */
import { randomUUID } from 'node:crypto';
import { ABORT_CAUSES, blockOutcome, type DecisionContext, decide, type Outcome } from './decide.js';
import { type PolicyDecision, type Stage, synthesizeBlock, type TextStage } from './decision.js';
import { type GuardedTool, type GuardToolOptions, makeGuards, type ToolExecutionContext } from './guard.js';
import { type Chains, chainsByStage, runBefore } from './interceptors.js';
import { observe } from './observe.js';
import type { CallOptions, EgressCallOptions, PepOptions, ResolvedOptions } from './options.js';
import { resolveOptions } from './options.js';
import { createPermitChecker, type PermitChecker } from './permit/verifier.js';
import {
  baseHeaders,
  InvalidRequest,
  isSessionId,
  type Payload,
  type Prepared,
  prepare,
  readCallOptions,
  replaceRunningValue,
  type Snapshot,
} from './request.js';
import { HttpTransport } from './transport/http.js';
import { VERSION } from './version.js';

export type { GuardedTool, GuardToolOptions, ToolExecutionContext } from './guard.js';

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
   * Wraps a tool so that it runs only after an ALLOW or WARN whose permit verifies (CONTRACT.md section 5).
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
  checker: PermitChecker | undefined;
}

/**
 * Creates a PEP client that sends every step to the PDP and enforces its verdict, failing closed.
 *
 * @param options - see {@link PepOptions}; `pdpUrl`, `agentId` and `session` are required
 * @returns a {@link Pep} with its own keep-alive connection pool
 * @throws TypeError synchronously on a bad option, with `err.option` naming its path (missing or
 *   non-http(s) `pdpUrl`, empty `agentId` or `session`, negative or non-integer numbers, a duration past
 *   2^31 - 1 ms, `none`/HMAC permit algorithms, an unknown key at any level, duplicate interceptor names, ...)
 * @remarks The five stage methods never reject. A PDP that is down, slow, answers anything but a
 * valid, enforceable decision (CONTRACT.md section 3, rules 1-5; RFC 7493 I-JSON), an interceptor that
 * fails, or a caller's abort yields a synthesized BLOCK with a {@link FailClosedCode}, never an ALLOW.
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
  const shared: Shared = {
    opts,
    ctx: {
      transport,
      inflight: new Set(),
      retries: opts.retries,
      attemptTimeoutMs: opts.attemptTimeoutMs,
      enforce: { checkPermitBinding: typeof opts.permits === 'object', requireEcho: opts.requireEcho },
      closed: false,
    },
    headers: baseHeaders(`agent-pep/${VERSION}`, opts.apiKey),
    chains: chainsByStage(opts.interceptors),
    checker: undefined,
  };
  // Built now so that a bad permits option (key, issuer, algorithms) is a TypeError at construction.
  if (typeof opts.permits === 'object') {
    try {
      shared.checker = createPermitChecker(opts.permits);
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

  /** One decision: call options, request, the `before` chain, then the PDP. Resolves, never rejects. */
  async function decideStep(
    stage: Stage,
    payload: Payload,
    rawOpts: unknown,
    snapshot: Snapshot | undefined,
    started: number,
  ): Promise<Outcome> {
    const requestId = randomUUID();
    let p: Prepared;
    try {
      const call = readCallOptions(rawOpts, stage, { session, simulated: opts.simulated });
      p = prepare(stage, payload, call, opts.agentId, requestId, snapshot);
    } catch (err) {
      const message = err instanceof InvalidRequest ? err.message : 'the call could not be turned into a request';
      return blockOutcome({ stage, requestId }, 'invalid_request', message);
    }
    const deadlineAt = started + opts.timeoutMs;
    const chain = chains[stage].before;
    if (chain.length > 0) {
      if (p.call.signal?.aborted) return blockOutcome(p.sent, 'aborted', ABORT_CAUSES.caller.message);
      const r = await runBefore(
        chain,
        { stage, session: p.call.session, tool: p.sent.tool, args: p.sent.args, content: p.req.content },
        { deadlineAt, signal: p.call.signal },
      );
      switch (r.kind) {
        case 'proceed':
          if (r.replaced) {
            try {
              replaceRunningValue(p, r);
            } catch (err) {
              const message = err instanceof InvalidRequest ? err.message : 'an interceptor replacement is not valid';
              return blockOutcome(p.sent, 'invalid_request', message);
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
          return { decision, attempts: 0 };
        }
        case 'aborted':
          return blockOutcome(p.sent, 'aborted', ABORT_CAUSES.caller.message);
        default: {
          const why = r.kind === 'timeout' ? 'was still pending at the deadline' : r.why;
          const o = blockOutcome(p.sent, 'interceptor_failed', `interceptor '${r.name}' ${why}`);
          o.decision.interceptor = r.name;
          return o;
        }
      }
    }
    const outcome = await decide(ctx, p, { ...shared.headers, 'x-request-id': requestId }, deadlineAt);
    outcome.args = p.sent.args;
    return outcome;
  }

  /** One observed decision, with the args that were sent (what a permit binds). */
  async function runStep(stage: Stage, payload: Payload, rawOpts: unknown, snapshot?: Snapshot): Promise<Outcome> {
    const started = performance.now();
    let outcome: Outcome;
    try {
      outcome = await decideStep(stage, payload, rawOpts, snapshot, started);
    } catch {
      // Unreachable by design; a bug must still fail closed.
      outcome = { decision: synthesizeBlock(stage, randomUUID(), 'invalid_request', 'internal error', 0), attempts: 0 };
    }
    const tool = 'tool' in payload && typeof payload.tool === 'string' ? payload.tool : undefined;
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
        shared.checker = createPermitChecker(opts.permits);
      }
      return shared.checker;
    },
    run: runStep,
    observe: (outcome, started, tool) => observe(opts.onDecision, outcome, started, tool),
    after: chains.action.after,
  });

  return {
    authorizeAction: (tool, args, o) => run('action', { tool, args }, o),
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
      for (const stop of [...ctx.inflight]) stop('closed');
      await ctx.transport.close();
    },
  };
}
