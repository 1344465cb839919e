/**
 * `createPep`: the client pipeline of `core/` with the guard helpers (`guardTool`, `guardText`) on
 * top. The composition root of the client: it imports the pipeline and the enforcement helpers, and
 * nothing imports it but the entry points and the adapters.
 * @packageDocumentation
 */

import { type CoreClient, createClient } from './core/client.js';
import type { AwaitResolutionOptions, EscalationWait } from './core/escalation-wait.js';
import type { VisibleToolsOptions } from './core/visibility.js';
import type { PolicyDecision } from './decision.js';
import { type Guards, makeGuards } from './enforce/guard.js';
import { makeKernel } from './enforce/kernel.js';
import { registerKernel } from './enforce/registry.js';
import type { ModelRequest } from './options/interceptors.js';
import type {
  ActionCall,
  ActionCallOptions,
  CallOptions,
  EgressCallOptions,
  InputCallOptions,
  PepOptions,
} from './options/pep.js';

export type { GuardedTool, Guards, GuardToolOptions, ToolExecutionContext } from './enforce/guard.js';
export type { StandardSchemaIssue, StandardSchemaResult, StandardSchemaV1 } from './enforce/schema.js';

/** The PEP client returned by {@link createPep}. */
export interface Pep extends Guards {
  /**
   * Asks the PDP whether the tool call may run. Never rejects.
   * @param tool - the tool name as the agent proposed it (sent as is; the PDP normalizes); at most 256 characters
   * @param args - the call's arguments: a plain object of JSON values (snapshotted before sending)
   * @param opts - `{ signal, session, simulated, toolPin }` ({@link ActionCallOptions})
   * @returns the decision; ALLOW/WARN carry `permitId` (not on simulated requests)
   */
  authorizeAction(tool: string, args: Record<string, unknown>, opts?: ActionCallOptions): Promise<PolicyDecision>;
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
   * docs/fail-closed.md is BLOCK for its call while the others stand; a batch answer whose count differs from the
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
  /**
   * Which of these tools this agent and session may be offered (docs/visibility.md): one batch of
   * simulated action decisions (`args: {}`, `purpose: 'visibility'`), sent as {@link Pep.authorizeActions}
   * sends a batch, within one deadline (`timeoutMs`). Never rejects. Interceptors do not run on these
   * requests (they judge calls); observers and telemetry see each decision.
   * @param names - tool names as the host knows them; `[]` or a non-array resolves `[]` without asking
   * @param opts - `{ signal?, session? }`; an unknown key or a bad value hides every tool
   * @returns the names whose decision is not BLOCK, as given and in the order given
   * @remarks Fails closed: a PDP that is down, slow or answers anything that is not an enforceable
   * decision hides every tool it touches. Visibility is never permission: every call is still decided.
   * @example
   * ```ts
   * const shown = await pep.visibleTools(['lookup_order', 'bank_transfer'], { session: 'sess_1' });
   * ```
   */
  visibleTools(names: readonly string[], opts?: VisibleToolsOptions): Promise<string[]>;
  /**
   * Checks user input (stage `input`). Never rejects.
   * @param opts - also `intent`: the {@link IntentGrant}s the application's own extractor read from this
   *   turn, sent for the PDP to keep in the session (docs/dev-pdp.md, "Intent grants")
   * @example
   * ```ts
   * const d = await pep.checkInput('Pay the rent, 950 EUR', {
   *   intent: [{ id: 'rent', tools: 'send_money', args: { amount: { lte: 950 } }, uses: 1 }],
   * });
   * ```
   */
  checkInput(content: string, opts?: InputCallOptions): Promise<PolicyDecision>;
  /**
   * Checks context about to be sent out to a model (stage `context_egress`). Never rejects.
   * @param opts - also `tool`: the tool whose result this content is (sent as `tool`)
   */
  checkContextEgress(content: string, opts?: EgressCallOptions): Promise<PolicyDecision>;
  /**
   * Checks a model request's settings before it is sent (docs/interceptors.md, "Model requests"): the
   * `modelRequest` interceptors, then the PDP as a `context_egress` decision with `purpose:
   * 'model_request'` and `content` the JSON of the settings. Never rejects. The AI SDK, LangChain and
   * OpenAI Agents adapters call it before each model request; call it yourself for a host of your own.
   * @param request - `{ model?, system?, temperature?, topP?, maxOutputTokens? }`; anything else is BLOCK `invalid_request`
   * @param opts - `{ signal, session, simulated }`
   * @returns the decision; on ALLOW or WARN, `transformedContent` (when set) is the JSON of the settings
   *   to send instead (numbers only lowered, a text replaced at most once); BLOCK or ESCALATE: do not send
   * @example
   * ```ts
   * const d = await pep.checkModelRequest({ model: 'gpt-5', temperature: 0.9, maxOutputTokens: 4096 });
   * const settings = d.transformedContent !== undefined ? JSON.parse(d.transformedContent) : undefined;
   * ```
   */
  checkModelRequest(request: ModelRequest, opts?: CallOptions): Promise<PolicyDecision>;
  /** Checks a model's draft output (stage `output`). Never rejects. */
  checkOutput(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  /** Checks the final message before it is delivered (stage `delivery`). Never rejects. */
  checkDelivery(content: string, opts?: CallOptions): Promise<PolicyDecision>;
  /**
   * Waits for a reviewer to resolve an ESCALATE (docs/dev-pdp.md, "Waiting for a review"): polls the
   * PDP's `GET /api/escalations/{id}` (this client's API key; the PDP answers `{ status }` only) with
   * backoff (250 ms doubling to 5 s, jittered) until the escalation is resolved, `timeoutMs` runs out
   * or `signal` aborts. Never rejects on a PDP failure: a PDP that cannot say is `unavailable` (treat
   * it as not approved, fail closed).
   * @param escalationId - `decision.escalationId` of the ESCALATE
   * @param opts - `{ signal?, timeoutMs? }` (`timeoutMs` 1 to 86400000, default 60000)
   * @returns `{ escalationId, status: 'approved' | 'denied' | 'expired' | 'pending' | 'unavailable', approved }`;
   *   on `approved`, retry the identical call: the PDP decides it again and grants it once
   * @throws TypeError (with `option`) for an id that is not 1-200 of `[A-Za-z0-9_-]` or a bad option
   * @example
   * ```ts
   * const d = await pep.authorizeAction('refund_payment', args);
   * if (d.verdict === 'ESCALATE' && d.escalationId && (await pep.awaitResolution(d.escalationId)).approved) {
   *   const again = await pep.authorizeAction('refund_payment', args); // ALLOW, once
   * }
   * ```
   */
  awaitResolution(escalationId: string, opts?: AwaitResolutionOptions): Promise<EscalationWait>;
  /** A client bound to another session, sharing this client's connection pool. @throws TypeError on an empty id */
  withSession(session: string): Pep;
  /** Releases the connection pool; in-flight and later decisions resolve BLOCK `pdp_unreachable`. */
  close(): Promise<void>;
}

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
  return withGuards(createClient(options));
}

/** A core client with the enforcement layer (src/enforce/) and the guard helpers of its session. */
function withGuards(core: CoreClient): Pep {
  const kernel = makeKernel(core.internals);
  const guards = makeGuards(kernel);
  const pep: Pep = {
    authorizeAction: core.authorizeAction,
    authorizeActions: core.authorizeActions,
    visibleTools: core.visibleTools,
    checkInput: core.checkInput,
    checkContextEgress: core.checkContextEgress,
    checkOutput: core.checkOutput,
    checkDelivery: core.checkDelivery,
    checkModelRequest: async (request, opts) => (await kernel.decideModelRequest(request, opts)).decision,
    awaitResolution: core.awaitResolution,
    guardTool: guards.guardTool,
    guardText: guards.guardText,
    withSession: (id) => withGuards(core.withSession(id)),
    close: core.close,
  };
  // Adapters decide through the client's enforcement layer (docs/adapters.md); its own refusals
  // (tool_changed, docs/visibility.md) reach the observers and telemetry like any decision.
  registerKernel(pep, kernel);
  return pep;
}

export type { AwaitResolutionOptions, EscalationWait, EscalationWaitStatus } from './core/escalation-wait.js';
export type { VisibleToolsOptions } from './core/visibility.js';
