/**
 * The OpenID AuthZEN Authorization API 1.0 wire (docs/authzen.md): a prepared request to an
 * evaluation, the `evaluations` batch body, the shapes of the answers (checked by hand, `shape.ts`),
 * their mapping to the agent-pep verdict (the agent-pep profile in `context`), and the discovery
 * document. Nothing here touches the network.
 * @internal
 */
import { type IntentGrant, VERDICTS, type Verdict } from '../decision.js';
import { AttemptFailure } from '../internal/failure.js';
import { joinUrl, trimTrailingSlashes } from '../internal/url.js';
import { toolNameJson } from '../permit/hash.js';
import {
  type AuthorizeRequest,
  type AuthorizeResponse,
  decodeJsonObject,
  type SentRequest,
  type VisibilityBatch,
} from './agent-pep.js';
import {
  arrayOf,
  boolean,
  type Check,
  jsonObject,
  looseObject,
  nonEmptyString,
  oneOf,
  optional,
  pathText,
  type ShapePath,
  string,
} from './shape.js';

/** The AuthZEN 1.0 paths under `pdpUrl` (used unless `discover: true` finds others). */
export const AUTHZEN_PATHS = Object.freeze({
  evaluation: '/access/v1/evaluation',
  evaluations: '/access/v1/evaluations',
  configuration: '/.well-known/authzen-configuration',
});

/** One AuthZEN evaluation (AuthZEN 1.0 section 6.1). */
export interface Evaluation {
  subject: { type: 'agent'; id: string };
  action: { name: string };
  resource: { type: 'tool' | 'content'; id: string; properties: Record<string, unknown> };
  context: {
    session: string;
    requestId: string;
    simulated?: true;
    purpose?: 'visibility' | 'model_request';
    visibilityBatch?: VisibilityBatch;
    sessionStep?: number;
    intent?: IntentGrant[];
    toolPin?: string;
  };
}

/** What one call sends and is checked against. */
export interface PreparedCall {
  readonly req: AuthorizeRequest;
  readonly sent: SentRequest;
}

/**
 * Maps one request: `subject: { type: 'agent', id: agentId }`; action stage `action: { name: 'call' }`,
 * `resource: { type: 'tool', id: <normalized tool>, properties: { args } }`; text stages
 * `action: { name: <stage> }`, `resource: { type: 'content', id: requestId, properties: { content, tool? } }`;
 * `context: { session, requestId, simulated?, purpose?, visibilityBatch?, sessionStep?, intent?, toolPin? }`.
 */
export function toEvaluation({ req, sent }: PreparedCall): Evaluation {
  const context: Evaluation['context'] = { session: req.session, requestId: req.requestId };
  if (req.simulated) context.simulated = true;
  if (req.purpose !== undefined) context.purpose = req.purpose;
  if (req.visibilityBatch !== undefined) context.visibilityBatch = req.visibilityBatch;
  if (req.sessionStep !== undefined) context.sessionStep = req.sessionStep;
  if (req.intent !== undefined) context.intent = req.intent;
  if (req.toolPin !== undefined) context.toolPin = req.toolPin;
  const subject = { type: 'agent', id: req.agentId } as const;
  if (req.stage === 'action') {
    return {
      subject,
      action: { name: 'call' },
      resource: { type: 'tool', id: sent.tool as string, properties: { args: req.args ?? {} } },
      context,
    };
  }
  const properties: Record<string, unknown> = { content: req.content };
  if (req.tool !== undefined) properties.tool = req.tool;
  return {
    subject,
    action: { name: req.stage },
    resource: { type: 'content', id: req.requestId, properties },
    context,
  };
}

/**
 * One evaluation as JSON text: {@link toEvaluation}, with an action's args as the RFC 8785 text the
 * client already wrote (`sent.argsJson`, hashed for rule 5) rather than serialized again.
 */
function evaluationJson(call: PreparedCall): string {
  const { req, sent } = call;
  if (req.stage !== 'action' || sent.argsJson === undefined) return JSON.stringify(toEvaluation(call));
  // The members in the order JSON.stringify(toEvaluation(call)) writes them.
  let tail = req.simulated ? ',"simulated":true' : '';
  if (req.purpose !== undefined) tail += `,"purpose":${JSON.stringify(req.purpose)}`;
  if (req.visibilityBatch !== undefined) tail += `,"visibilityBatch":${JSON.stringify(req.visibilityBatch)}`;
  if (req.sessionStep !== undefined) tail += `,"sessionStep":${req.sessionStep}`;
  if (req.toolPin !== undefined) tail += `,"toolPin":${JSON.stringify(req.toolPin)}`;
  return `${actionPrefix(req.agentId)}${toolNameJson(sent.tool as string)},"properties":{"args":${sent.argsJson}}},"context":{"session":${stringJson(req.session)},"requestId":${stringJson(req.requestId)}${tail}}}`;
}

/** Printable ASCII but a quote and a backslash: a string of these is its own JSON text between quotes. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/**
 * `JSON.stringify` of a string, the same text: a request id (a UUID) or a session id is most often
 * plain ASCII, written between quotes without `JSON.stringify` (about 40 ns less a string).
 */
function stringJson(s: string): string {
  return PLAIN_ASCII.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** The text of an action evaluation up to the tool name, for the last agent id seen (one per client, as a rule). */
let lastAgent: string | undefined;
let lastPrefix = '';
function actionPrefix(agentId: string): string {
  if (agentId !== lastAgent) {
    lastPrefix = `{"subject":{"type":"agent","id":${JSON.stringify(agentId)}},"action":{"name":"call"},"resource":{"type":"tool","id":`;
    lastAgent = agentId;
  }
  return lastPrefix;
}

/** The body of `POST /access/v1/evaluation`. */
export function encodeEvaluation(call: PreparedCall): string {
  return evaluationJson(call);
}

/**
 * The body of `POST /access/v1/evaluations`: every item whole (no top-level defaults), each with its
 * own `requestId` in its `context`, and `options: { evaluations_semantic: 'execute_all' }` so that the
 * PDP answers every item.
 */
export function encodeEvaluations(calls: readonly PreparedCall[]): string {
  let out = '{"options":{"evaluations_semantic":"execute_all"},"evaluations":[';
  for (let i = 0; i < calls.length; i++) out += `${i === 0 ? '' : ','}${evaluationJson(calls[i] as PreparedCall)}`;
  return `${out}]}`;
}

/**
 * `context` of an answer: the agent-pep profile. Unknown members are ignored; a profile member of the
 * wrong type fails. `reason_admin`, `reason_user` and `latches` are read only when they have the
 * expected type (AuthZEN allows other shapes for reasons).
 */
const checkProfileContext: Check = looseObject({
  verdict: optional(oneOf(VERDICTS)),
  permitId: optional(nonEmptyString),
  transformedContent: optional(string),
  transformedArgs: optional(jsonObject),
  escalationId: optional(string),
  decisionId: optional(string),
  requestId: optional(string),
  sessionLabels: optional(arrayOf(string)),
  route: optional(jsonObject),
  grants: optional(arrayOf(string)),
});

/** `context` once it passed {@link checkProfileContext}. */
interface ProfileContext {
  verdict?: Verdict;
  permitId?: string;
  transformedContent?: string;
  transformedArgs?: Record<string, unknown>;
  escalationId?: string;
  decisionId?: string;
  requestId?: string;
  sessionLabels?: string[];
  route?: Record<string, unknown>;
  grants?: string[];
  [member: string]: unknown;
}

/** An evaluation answer (AuthZEN 1.0 section 6.2): `decision` must be a boolean. */
export const checkEvaluationResponse: Check = looseObject({
  decision: boolean,
  context: optional(checkProfileContext),
});

/** An `evaluations` answer (AuthZEN 1.0 section 7.2): the items are checked one by one. */
const checkEvaluationsResponse: Check = looseObject({ evaluations: arrayOf() });

/** The discovery document (AuthZEN 1.0 section 9): the members read. */
const checkConfiguration: Check = looseObject({
  policy_decision_point: string,
  access_evaluation_endpoint: string,
  access_evaluations_endpoint: optional(string),
});

function schemaFailure(path: ShapePath, prefix: string): AttemptFailure {
  return new AttemptFailure('invalid_response', `PDP response fails the AuthZEN schema at ${prefix}${pathText(path)}`);
}

function ambiguous(what: string): AttemptFailure {
  return new AttemptFailure('ambiguous_decision', `PDP decision is ambiguous: ${what}`);
}

/** One answer in agent-pep terms, for the enforceability checks (`enforce.ts`). */
export interface MappedAnswer {
  response: AuthorizeResponse;
  /** What `toDecision` reads for `error` and `errors`: the item's own members and its `context`'s. */
  raw: Record<string, unknown>;
}

/** An `errors` member that reports something: present and not an empty array. */
function reportsErrors(e: unknown): boolean {
  return e !== undefined && !(Array.isArray(e) && e.length === 0);
}

/**
 * Maps one parsed answer: `decision: true` is ALLOW, `false` a PDP BLOCK with `reason` from
 * `context.reason_admin` or `context.reason_user` (when strings); `context.verdict` may refine it to
 * WARN (only with `true`) or ESCALATE (only with `false`); the other profile members are carried over.
 * @throws AttemptFailure `invalid_response` (schema), `ambiguous_decision` (a contradicting verdict),
 *   `session_state_lost` (an item whose error's code is `session_state_lost`)
 */
export function mapAnswer(value: unknown, where = ''): MappedAnswer {
  const failed = checkEvaluationResponse(value);
  if (failed !== undefined) throw schemaFailure(failed, where);
  const { decision, context = {} } = value as { decision: boolean; context?: ProfileContext };
  const given = context.verdict;
  let verdict: AuthorizeResponse['verdict'];
  if (decision) {
    if (given !== undefined && given !== 'ALLOW' && given !== 'WARN')
      throw ambiguous(`verdict ${given} with decision true`);
    verdict = given ?? 'ALLOW';
  } else {
    if (given !== undefined && given !== 'BLOCK' && given !== 'ESCALATE') {
      throw ambiguous(`verdict ${given} with decision false`);
    }
    verdict = given ?? 'BLOCK';
  }
  const response: AuthorizeResponse = { verdict };
  const reason =
    typeof context.reason_admin === 'string'
      ? context.reason_admin
      : typeof context.reason_user === 'string'
        ? context.reason_user
        : undefined;
  if (reason !== undefined) response.reason = reason;
  const latches = context.latches;
  if (Array.isArray(latches) && latches.every((l) => typeof l === 'string')) response.latches = latches as string[];
  if (context.decisionId !== undefined) response.decisionId = context.decisionId;
  if (context.sessionLabels !== undefined) response.sessionLabels = context.sessionLabels;
  if (context.grants !== undefined) response.grants = context.grants;
  if (context.permitId !== undefined) response.permitId = context.permitId;
  if (context.transformedContent !== undefined) response.transformedContent = context.transformedContent;
  if (context.transformedArgs !== undefined) response.transformedArgs = context.transformedArgs;
  if (context.escalationId !== undefined) response.escalationId = context.escalationId;
  if (context.route !== undefined) response.route = context.route;
  if (context.requestId !== undefined) response.requestId = context.requestId;
  const item = value as Record<string, unknown>;
  const raw: Record<string, unknown> = {};
  const error = Object.hasOwn(item, 'error') ? item.error : Object.hasOwn(context, 'error') ? context.error : undefined;
  if (Object.hasOwn(item, 'error') || Object.hasOwn(context, 'error')) raw.error = error;
  if (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'session_state_lost') {
    // an item the PDP refused because it lost the session (docs/dev-pdp.md, "Session integrity")
    throw new AttemptFailure(
      'session_state_lost',
      `PDP lost the state of this session (${where || 'evaluation'}) and refuses every step of it; start a new session`,
    );
  }
  if (reportsErrors(item.errors)) raw.errors = item.errors;
  else if (reportsErrors(context.errors)) raw.errors = context.errors;
  return { response, raw };
}

/**
 * Decodes and maps the answer of one evaluation (docs/fail-closed.md, then the mapping above).
 * @throws AttemptFailure `invalid_response`, `ambiguous_decision`
 */
export function parseEvaluation(body: Uint8Array): MappedAnswer {
  return mapAnswer(decodeJsonObject(body));
}

/**
 * Decodes an `evaluations` answer and maps each item on its own: an item that fails is that item's
 * failure while the others stand. A count that differs from `expected` ties no answer to any call, and
 * an `error` member or a non-empty `errors` beside the items (docs/fail-closed.md) decides none of them.
 * @throws AttemptFailure `invalid_response` (the body), `ambiguous_decision` (the count, an error reported)
 */
export function parseEvaluations(body: Uint8Array, expected: number): (MappedAnswer | AttemptFailure)[] {
  const parsed = decodeJsonObject(body);
  const failed = checkEvaluationsResponse(parsed);
  if (failed !== undefined) throw schemaFailure(failed, '');
  // docs/fail-closed.md, for the answer as a whole: a PDP that reports an error beside its evaluations
  // has not decided any of them (its own members, or its `context`'s, as for one item).
  const context = parsed.context;
  const top = typeof context === 'object' && context !== null ? (context as Record<string, unknown>) : {};
  if (Object.hasOwn(parsed, 'error') || Object.hasOwn(top, 'error')) throw ambiguous('the PDP reported an error');
  if (reportsErrors(parsed.errors) || reportsErrors(top.errors)) throw ambiguous('the PDP reported errors');
  const items = parsed.evaluations as unknown[];
  if (items.length !== expected) {
    throw ambiguous(`${items.length} evaluations answered for ${expected} asked`);
  }
  return items.map((item, i) => {
    try {
      return mapAnswer(item, `evaluations.${i}.`);
    } catch (err) {
      return err instanceof AttemptFailure ? err : new AttemptFailure('invalid_response', 'PDP answer is malformed');
    }
  });
}

/** Where the evaluations go: paths on the `pdpUrl` origin. */
export interface Endpoints {
  evaluation: string;
  /** Undefined when the discovery document names no batch endpoint (batches go as single requests). */
  evaluations: string | undefined;
}

/** The endpoints under `base` (the path of `pdpUrl`, no trailing `/`) when there is no discovery. */
export function defaultEndpoints(base: string): Endpoints {
  return { evaluation: joinUrl(base, AUTHZEN_PATHS.evaluation), evaluations: joinUrl(base, AUTHZEN_PATHS.evaluations) };
}

/** A PDP identifier in comparable form: origin and path, without a trailing `/`. */
function identifier(url: URL): string {
  return `${url.origin}${trimTrailingSlashes(url.pathname)}`;
}

/** Why a discovery document was discarded for good (every decision is then `pdp_unreachable`). */
export class DiscardedConfiguration extends Error {
  override readonly name = 'DiscardedConfiguration';
}

function endpointPath(value: string, pdp: URL): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new DiscardedConfiguration('the discovery document names an endpoint that is not a URL');
  }
  if (url.origin !== pdp.origin) {
    throw new DiscardedConfiguration('the discovery document names an endpoint on another origin');
  }
  if (url.username !== '' || url.password !== '' || url.hash !== '') {
    throw new DiscardedConfiguration('the discovery document names an endpoint with credentials or a fragment');
  }
  return `${url.pathname}${url.search}`;
}

/**
 * Reads the discovery document (AuthZEN 1.0 section 9). Its `policy_decision_point` must be `pdp`
 * (compared as origin and path, a trailing `/` aside), and its endpoints on the same origin (where the
 * client's pool and API key go), else it is discarded.
 * @throws AttemptFailure `invalid_response` (a body that is not a discovery document)
 * @throws DiscardedConfiguration (a document for another PDP, or endpoints elsewhere)
 */
export function parseConfiguration(body: Uint8Array, pdp: URL): Endpoints {
  const parsed = decodeJsonObject(body);
  const failed = checkConfiguration(parsed);
  if (failed !== undefined) throw schemaFailure(failed, '');
  const doc = parsed as {
    policy_decision_point: string;
    access_evaluation_endpoint: string;
    access_evaluations_endpoint?: string;
  };
  let named: URL;
  try {
    named = new URL(doc.policy_decision_point);
  } catch {
    throw new DiscardedConfiguration('the discovery document names no valid policy_decision_point');
  }
  if (identifier(named) !== identifier(pdp) || named.search !== '' || named.hash !== '') {
    throw new DiscardedConfiguration('the discovery document is for another policy_decision_point');
  }
  return {
    evaluation: endpointPath(doc.access_evaluation_endpoint, pdp),
    evaluations:
      doc.access_evaluations_endpoint === undefined ? undefined : endpointPath(doc.access_evaluations_endpoint, pdp),
  };
}
