/**
 * The wire protocol (docs/fail-closed.md): the request body and the response's shape (checked by
 * hand, `shape.ts`: the decision path loads no schema library).
 * @internal
 */
import { type IntentGrant, type PolicyDecision, type Stage, VERDICTS } from '../decision.js';
import { AttemptFailure } from '../internal/failure.js';
import type { BoundPermit } from '../permit/binding.js';
import { decodeJsonBody, type JsonBodyProblem } from './json.js';
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
  string,
} from './shape.js';

/** The request body sent to `POST {pdpUrl}/api/policy/authorize`. */
export interface AuthorizeRequest {
  agentId: string;
  session: string;
  stage: Stage;
  requestId: string;
  content?: string;
  tool?: string;
  args?: Record<string, unknown>;
  simulated?: true;
  /** `'visibility'`: a question about the tool alone, to decide what the model is offered (docs/visibility.md). */
  purpose?: 'visibility' | 'model_request';
  /** A visibility request: the batch it belongs to (`id`) and how many requests the batch has (`size`). */
  visibilityBatch?: VisibilityBatch;
  /**
   * This client's count of the session's non-simulated requests the PDP decided, this one included
   * (from 1; a simulated request carries the count so far). The PDP refuses a session it does not know
   * with `sessionStep > 1` (409 `session_state_lost`).
   */
  sessionStep?: number;
  /** Input stage: the grants the application's own extractor proposed (`checkInput(text, { intent })`). */
  intent?: IntentGrant[];
  /** Action: the SHA-256 (base64url) of the tool definition the call is decided against (an MCP pin). */
  toolPin?: string;
}

/** The batch a visibility request belongs to: its id and how many requests it has (docs/visibility.md). */
export interface VisibilityBatch {
  id: string;
  size: number;
}

/**
 * The PDP's answer. Unknown members are ignored (loose); a known member of the wrong type fails.
 * `error` and `errors` are read only to refuse a PDP that reports an error (rule 4).
 */
export const checkAuthorizeResponse: Check = looseObject({
  verdict: oneOf(VERDICTS),
  decisionId: optional(string),
  reason: optional(string),
  latches: optional(arrayOf(string)),
  sessionLabels: optional(arrayOf(string)),
  grants: optional(arrayOf(string)),
  permitId: optional(nonEmptyString),
  transformedContent: optional(string),
  transformedArgs: optional(jsonObject),
  escalationId: optional(string),
  route: optional(jsonObject),
  simulated: optional(boolean),
  requestId: optional(string),
  stage: optional(string),
  obligations: optional(arrayOf()),
});

/**
 * A PDP answer that passed {@link checkAuthorizeResponse}: the members a decision copies, typed as
 * {@link PolicyDecision} types them, plus what the wire alone carries.
 */
export type AuthorizeResponse = Pick<PolicyDecision, 'verdict'> &
  Partial<
    Pick<
      PolicyDecision,
      | 'decisionId'
      | 'reason'
      | 'latches'
      | 'sessionLabels'
      | 'grants'
      | 'permitId'
      | 'transformedContent'
      | 'transformedArgs'
      | 'escalationId'
      | 'simulated'
      | 'requestId'
    >
  > & { stage?: string; obligations?: unknown[]; [member: string]: unknown };

/** Every member {@link encodeRequest} writes by hand: a member added to the request must be added there too. */
type Written =
  | 'agentId'
  | 'session'
  | 'stage'
  | 'requestId'
  | 'content'
  | 'tool'
  | 'args'
  | 'simulated'
  | 'purpose'
  | 'visibilityBatch'
  | 'sessionStep'
  | 'intent'
  | 'toolPin';
const everyMemberWritten: [keyof AuthorizeRequest] extends [Written] ? true : never = true;
void everyMemberWritten;

/**
 * A character that keeps a string from being its own JSON text between quotes: a quote, a backslash,
 * a control character (RFC 8259 section 7), or any surrogate (`JSON.stringify` escapes a lone one; a
 * string with a pair goes the slow way too, to keep the test simple).
 */
const NOT_VERBATIM = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify(text)`, without its escape scan when a quick one finds nothing to escape. */
function jsonString(text: string): string {
  return NOT_VERBATIM.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** The text of a request up to its `requestId`, for the last agent, session and stage seen. */
let lastAgent: string | undefined;
let lastSession: string | undefined;
let lastStage: string | undefined;
let lastPrefix = '';
function requestPrefix(agentId: string, session: string, stage: string): string {
  if (agentId !== lastAgent || session !== lastSession || stage !== lastStage) {
    lastPrefix = `{"agentId":${JSON.stringify(agentId)},"session":${JSON.stringify(session)},"stage":${JSON.stringify(stage)},"requestId":`;
    lastAgent = agentId;
    lastSession = session;
    lastStage = stage;
  }
  return lastPrefix;
}

/**
 * Serializes a request body: the same text as `JSON.stringify(req)` (members in the order `prepare`
 * sets them), written by hand. `simulated` is sent only when true.
 * @param argsJson - `req.args` as RFC 8785 text, when the caller already wrote it (the client does,
 *   to hash it for rule 5): the body carries that text, the same members with their keys sorted
 */
export function encodeRequest(req: AuthorizeRequest, argsJson?: string): string {
  let out = `${requestPrefix(req.agentId, req.session, req.stage)}${jsonString(req.requestId)}`;
  if (req.content !== undefined) out += `,"content":${jsonString(req.content)}`;
  if (req.tool !== undefined) out += `,"tool":${JSON.stringify(req.tool)}`;
  if (req.args !== undefined) out += `,"args":${argsJson ?? JSON.stringify(req.args)}`;
  if (req.simulated !== undefined) out += `,"simulated":${req.simulated}`;
  if (req.purpose !== undefined) out += `,"purpose":${JSON.stringify(req.purpose)}`;
  if (req.visibilityBatch !== undefined) out += `,"visibilityBatch":${JSON.stringify(req.visibilityBatch)}`;
  if (req.sessionStep !== undefined) out += `,"sessionStep":${req.sessionStep}`;
  if (req.intent !== undefined) out += `,"intent":${JSON.stringify(req.intent)}`;
  if (req.toolPin !== undefined) out += `,"toolPin":${JSON.stringify(req.toolPin)}`;
  return `${out}}`;
}

/** What each problem of {@link decodeJsonBody} is called in an `invalid_response` message. */
const BODY_PROBLEMS: Readonly<Record<JsonBodyProblem, string>> = {
  utf8: 'PDP response is not valid UTF-8',
  json: 'PDP response is not JSON',
  duplicate: 'PDP response is not I-JSON: duplicate member names',
  value: 'PDP response is not I-JSON: unpaired surrogate or non-finite number',
};

/**
 * Decodes a whole response body with the one JSON body decoder ({@link decodeJsonBody}: UTF-8 without
 * a BOM, JSON, I-JSON), and checks it is a JSON object. Shared by both protocols (`authzen.ts`).
 * @throws AttemptFailure `invalid_response`
 */
export function decodeJsonObject(body: Uint8Array): Record<string, unknown> {
  const d = decodeJsonBody(body);
  if (!d.ok) {
    // A body that is JSON but not an object is named for that first, as before.
    if (d.problem !== 'utf8' && d.problem !== 'json' && !isObjectText(d.text)) notAnObject();
    throw new AttemptFailure('invalid_response', BODY_PROBLEMS[d.problem]);
  }
  if (typeof d.value !== 'object' || d.value === null || Array.isArray(d.value)) notAnObject();
  return d.value as Record<string, unknown>;
}

function isObjectText(text: string | undefined): boolean {
  return text?.trimStart().startsWith('{') === true;
}

function notAnObject(): never {
  throw new AttemptFailure('invalid_response', 'PDP response is not a JSON object');
}

/**
 * Decodes and validates a whole response body ({@link decodeJsonObject}), an object passing
 * {@link checkAuthorizeResponse}.
 * @throws AttemptFailure `invalid_response`
 */
export function parseResponse(body: Uint8Array): { response: AuthorizeResponse; raw: Record<string, unknown> } {
  const parsed = decodeJsonObject(body);
  const failed = checkAuthorizeResponse(parsed);
  if (failed !== undefined) {
    throw new AttemptFailure('invalid_response', `PDP response fails the schema at ${pathText(failed)}`);
  }
  // The checked object itself: `toDecision` only reads it, and copies what a decision keeps.
  return { response: parsed as AuthorizeResponse, raw: parsed };
}

/** What was asked, for comparing echoes and the permit binding. */
export interface SentRequest {
  stage: Stage;
  requestId: string;
  agentId: string;
  session: string;
  simulated: boolean;
  /** Normalized tool name (action). */
  tool?: string;
  /** The args snapshot that was sent (action). */
  args?: Record<string, unknown>;
  /** `args` as RFC 8785 text, written once (action): the request carries it, and rule 5 hashes it. */
  argsJson?: string;
  /** Set by {@link toDecision} when rule 5 passed: what it decoded and hashed, for `guardTool` to reuse. */
  bound?: BoundPermit;
}
