/**
 * One decision request, whichever protocol carried it: the checks both the native protocol
 * (docs/fail-closed.md) and AuthZEN (docs/authzen.md) apply before a decision.
 * @packageDocumentation
 */
import {
  isTextStage,
  normalizeToolName,
  referenceActionHash,
  STAGES,
  type Stage,
  snapshotJsonObject,
} from 'agent-pep/internal';
import { DEV_PDP_DEFAULTS } from './defaults.js';
import { badRequest, HttpError, REQUEST_ID } from './http.js';
import type { CompiledPolicy } from './policy.js';
import { type ClientGrantSpec, readClientGrants } from './sessions/grants.js';
import { randomId } from './signing.js';

/** A checked decision request. @internal */
export interface DecisionRequest {
  agentId: string;
  /** `''` when the request named no session (AuthZEN only): see `stateless`. */
  session: string;
  /** True for an AuthZEN request whose `context` names no session: an empty state, nothing written. */
  stateless?: true;
  stage: Stage;
  requestId: string;
  simulated: boolean;
  /** Text stages. */
  content?: string;
  /** Action, and context_egress when given: normalized. */
  tool?: string;
  /** Action: a snapshot of the args. */
  args?: Record<string, unknown>;
  /** Action: `act_hash` of the request's tool and args. */
  actHash?: string;
  /**
   * `'visibility'` (action): decided on the tool alone (docs/visibility.md). `'model_request'`
   * (context_egress): a model request's settings as JSON content (docs/dev-pdp.md, "Model requests").
   */
  purpose?: 'visibility' | 'model_request';
  /** A visibility request: its batch id and the batch's size. */
  visibilityBatch?: { id: string; size: number };
  /** Input stage: the grants the application's own extractor proposed (`intent`), checked. */
  intent?: ClientGrantSpec[];
  /** The PEP's count of this session's decided non-simulated requests, this one included (from 1). */
  sessionStep?: number;
  /** Action: the SHA-256 (base64url) of the tool definition the call is decided against (an MCP pin). */
  toolPin?: string;
}

/** The fields a protocol extracted, not yet checked. @internal */
export interface RequestFields {
  agentId: unknown;
  session: unknown;
  stage: unknown;
  requestId: unknown;
  simulated: unknown;
  content: unknown;
  tool: unknown;
  args: unknown;
  /** Absent from a protocol that does not carry it. */
  purpose?: unknown;
  visibilityBatch?: unknown;
  /** Input stage: the application's grants. */
  intent?: unknown;
  sessionStep?: unknown;
  /** Action: the pin of the tool's definition. */
  toolPin?: unknown;
}

/**
 * Normalizes a tool name: at most 256 characters as sent, and something left after normalizing.
 * @throws HttpError 400 `bad_request`
 * @internal
 */
export function checkTool(tool: unknown): string {
  if (typeof tool !== 'string') throw badRequest('tool must be a string');
  if (tool.length > DEV_PDP_DEFAULTS.maxToolNameLength) {
    throw badRequest(`tool names are at most ${DEV_PDP_DEFAULTS.maxToolNameLength} characters`);
  }
  try {
    return normalizeToolName(tool);
  } catch {
    throw badRequest('tool normalizes to nothing');
  }
}

/**
 * Checks the fields of one decision, in the protocol-independent way: agent listed by the policy,
 * session, stage, request id (and its agreement with `x-request-id`), `content` on text stages, `tool`
 * on the action stage (and optionally on context_egress), `args` a plain object of JSON values.
 * @throws HttpError 400 `bad_request`, 404 `unknown_agent`
 * @internal
 */
export function checkRequest(
  fields: RequestFields,
  policy: CompiledPolicy,
  headerId: string | undefined,
  where = '',
  sessionOptional = false,
): DecisionRequest {
  const { agentId, stage, requestId, simulated, content, tool, args } = fields;
  const at = (name: string) => `${where}${name}`;
  if (typeof agentId !== 'string' || agentId.length === 0)
    throw badRequest(`${at('agentId')} must be a non-empty string`);
  const stateless = sessionOptional && fields.session === undefined;
  const session = stateless ? '' : fields.session;
  if (!stateless && (typeof session !== 'string' || session.length === 0))
    throw badRequest(`${at('session')} must be a non-empty string`);
  if (typeof stage !== 'string' || !(STAGES as readonly string[]).includes(stage))
    throw badRequest(`${at('stage')} is not a stage`);
  if (requestId !== undefined && (typeof requestId !== 'string' || !REQUEST_ID.test(requestId))) {
    throw badRequest(`${at('requestId')} must be 1-200 visible ASCII characters`);
  }
  if (requestId !== undefined && headerId !== undefined && requestId !== headerId) {
    throw badRequest(`${at('requestId')} differs from the x-request-id header`);
  }
  if (simulated !== undefined && typeof simulated !== 'boolean')
    throw badRequest(`${at('simulated')} must be a boolean`);
  const out: DecisionRequest = {
    agentId,
    session: session as string,
    ...(stateless ? { stateless: true as const } : {}),
    stage: stage as Stage,
    requestId: (requestId as string | undefined) ?? headerId ?? randomId('req_'),
    simulated: simulated === true,
  };
  readSessionFields(fields, out, policy, at);
  if (isTextStage(stage)) {
    if (typeof content !== 'string') throw badRequest(`${at('content')} must be a string on a text stage`);
    if (args !== undefined) throw badRequest(`${at('args')} belongs to the action stage`);
    if (tool !== undefined && stage !== 'context_egress')
      throw badRequest(`${at('tool')} belongs to the action stage and context_egress`);
    if (fields.visibilityBatch !== undefined) throw badRequest(`${at('visibilityBatch')} belongs to the action stage`);
    if (fields.purpose !== undefined) readModelRequestPurpose(fields.purpose, content, out, at);
    out.content = content;
    if (tool !== undefined) out.tool = checkTool(tool);
    return listed(out, policy);
  }
  if (content !== undefined) throw badRequest(`${at('content')} belongs to the text stages`);
  out.tool = checkTool(tool);
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw badRequest(`${at('args')} must be a JSON object`);
  try {
    out.args = snapshotJsonObject(args);
  } catch {
    throw badRequest(`${at('args')} must be a plain object of JSON values`);
  }
  out.actHash = referenceActionHash(out.tool, out.args);
  readPurpose(fields, out, at);
  return listed(out, policy);
}

/**
 * `sessionStep` (a positive safe integer), `intent` (input stage only, a list of grants the policy's
 * groups resolve) and `toolPin` (action stage only, 43 base64url characters).
 * @throws HttpError 400 `bad_request` for a bad `sessionStep`; 400 `invalid_request` for a bad `intent`
 */
function readSessionFields(
  fields: RequestFields,
  out: DecisionRequest,
  policy: CompiledPolicy,
  at: (name: string) => string,
): void {
  const { sessionStep, intent, toolPin } = fields;
  if (toolPin !== undefined) {
    if (out.stage !== 'action')
      throw new HttpError(400, 'invalid_request', `${at('toolPin')} belongs to the action stage`);
    if (typeof toolPin !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(toolPin))
      throw badRequest(`${at('toolPin')} must be a SHA-256 in base64url (43 characters)`);
    out.toolPin = toolPin;
  }
  if (sessionStep !== undefined) {
    if (!Number.isSafeInteger(sessionStep) || (sessionStep as number) < 1)
      throw badRequest(`${at('sessionStep')} must be a positive integer`);
    out.sessionStep = sessionStep as number;
  }
  if (intent === undefined) return;
  if (out.stage !== 'input') throw new HttpError(400, 'invalid_request', `${at('intent')} belongs to the input stage`);
  out.intent = readClientGrants(intent, policy.toolGroups ?? new Map(), at('intent'));
}

/**
 * `purpose` on a text stage: only `'model_request'`, on context_egress, with content the JSON object of
 * the request's settings.
 * @throws HttpError 400 `bad_request`
 */
function readModelRequestPurpose(
  purpose: unknown,
  content: string,
  out: DecisionRequest,
  at: (name: string) => string,
): void {
  if (purpose !== 'model_request' || out.stage !== 'context_egress') {
    throw badRequest(`${at('purpose')} on a text stage must be "model_request", on context_egress`);
  }
  let settings: unknown;
  try {
    settings = JSON.parse(content);
  } catch {
    settings = undefined;
  }
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) {
    throw badRequest(`${at('content')} of a model request must be the JSON object of its settings`);
  }
  out.purpose = 'model_request';
}

/** Most requests one visibility batch may declare. */
const MAX_VISIBILITY_BATCH = 10_000;

/**
 * `purpose` and `visibilityBatch` of an action request: `purpose` absent or `'visibility'`, the batch
 * only with it, `{ id: 1-200 visible ASCII characters, size: 1-10000 }`.
 * @throws HttpError 400 `bad_request`
 */
function readPurpose(fields: RequestFields, out: DecisionRequest, at: (name: string) => string): void {
  const { purpose, visibilityBatch: batch } = fields;
  if (purpose === undefined) {
    if (batch !== undefined) throw badRequest(`${at('visibilityBatch')} belongs to a visibility request`);
    return;
  }
  if (purpose !== 'visibility') throw badRequest(`${at('purpose')} must be "visibility" when given`);
  out.purpose = purpose;
  if (batch === undefined) return;
  const b = batch as { id?: unknown; size?: unknown } | null;
  if (
    typeof b !== 'object' ||
    b === null ||
    Array.isArray(b) ||
    typeof b.id !== 'string' ||
    !REQUEST_ID.test(b.id) ||
    !Number.isSafeInteger(b.size) ||
    (b.size as number) < 1 ||
    (b.size as number) > MAX_VISIBILITY_BATCH
  ) {
    throw badRequest(`${at('visibilityBatch')} must be { id, size } (size 1-${MAX_VISIBILITY_BATCH})`);
  }
  out.visibilityBatch = { id: b.id, size: b.size as number };
}

/** A well-formed request from an agent the policy does not list is a 404 `unknown_agent`. */
function listed(request: DecisionRequest, policy: CompiledPolicy): DecisionRequest {
  if (!policy.agents.has(request.agentId))
    throw new HttpError(404, 'unknown_agent', 'the policy does not list this agent');
  return request;
}
