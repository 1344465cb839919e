/**
 * The wire protocol (docs/fail-closed.md): the request body and the response schema.
 * The only zod import for the protocol.
 * @internal
 */
import { z } from 'zod';
import { type Stage, VERDICTS } from '../decision.js';
import { AttemptFailure } from '../internal/failure.js';
import { ijsonProblem } from './json.js';

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
}

const VerdictSchema = z.enum(VERDICTS);

/** A plain JSON object (not an array, not null). */
const JsonObjectSchema = z.custom<Record<string, unknown>>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  'expected a JSON object',
);

/**
 * The PDP's answer. Unknown members are ignored (`loose`); a known member of the wrong type fails.
 * `error` and `errors` are read only to refuse a PDP that reports an error (rule 4).
 */
export const AuthorizeResponseSchema = z.looseObject({
  verdict: VerdictSchema,
  decisionId: z.string().optional(),
  reason: z.string().optional(),
  latches: z.array(z.string()).optional(),
  permitId: z.string().min(1).optional(),
  transformedContent: z.string().optional(),
  transformedArgs: JsonObjectSchema.optional(),
  escalationId: z.string().optional(),
  simulated: z.boolean().optional(),
  requestId: z.string().optional(),
  stage: z.string().optional(),
  obligations: z.array(z.unknown()).optional(),
});

/** A schema-valid PDP answer. */
export type AuthorizeResponse = z.infer<typeof AuthorizeResponseSchema>;

/** Every member {@link encodeRequest} writes by hand: a member added to the request must be added there too. */
type Written = 'agentId' | 'session' | 'stage' | 'requestId' | 'content' | 'tool' | 'args' | 'simulated';
const everyMemberWritten: [keyof AuthorizeRequest] extends [Written] ? true : never = true;
void everyMemberWritten;

/**
 * Serializes a request body. `simulated` is sent only when true.
 * @param argsJson - `req.args` as RFC 8785 text, when the caller already wrote it (the client does,
 *   to hash it for rule 5): the body carries that text, the same members with their keys sorted
 */
export function encodeRequest(req: AuthorizeRequest, argsJson?: string): string {
  if (argsJson === undefined || req.args === undefined || req.content !== undefined) return JSON.stringify(req);
  // The members of an action request, in the order JSON.stringify(req) writes them, with the args text.
  let out = `{"agentId":${JSON.stringify(req.agentId)},"session":${JSON.stringify(req.session)},"stage":${JSON.stringify(req.stage)},"requestId":${JSON.stringify(req.requestId)}`;
  if (req.tool !== undefined) out += `,"tool":${JSON.stringify(req.tool)}`;
  out += `,"args":${argsJson}`;
  if (req.simulated !== undefined) out += `,"simulated":${req.simulated}`;
  return `${out}}`;
}

// ignoreBOM keeps a leading U+FEFF in the text, where JSON.parse refuses it (RFC 8259 section 8.1: senders MUST NOT add one).
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes a whole response body: valid UTF-8, JSON, I-JSON (RFC 7493: no duplicate member names, no
 * unpaired surrogates, finite numbers), a JSON object. Shared by both protocols (`authzen.ts`).
 * @throws AttemptFailure `invalid_response`
 */
export function decodeJsonObject(body: Uint8Array): Record<string, unknown> {
  let text: string;
  try {
    text = utf8.decode(body);
  } catch {
    throw new AttemptFailure('invalid_response', 'PDP response is not valid UTF-8');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AttemptFailure('invalid_response', 'PDP response is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new AttemptFailure('invalid_response', 'PDP response is not a JSON object');
  }
  const problem = ijsonProblem(text, parsed);
  if (problem === 'duplicate') {
    throw new AttemptFailure('invalid_response', 'PDP response is not I-JSON: duplicate member names');
  }
  if (problem === 'value') {
    throw new AttemptFailure('invalid_response', 'PDP response is not I-JSON: unpaired surrogate or non-finite number');
  }
  return parsed as Record<string, unknown>;
}

/**
 * Decodes and validates a whole response body ({@link decodeJsonObject}), an object matching
 * {@link AuthorizeResponseSchema}.
 * @throws AttemptFailure `invalid_response`
 */
export function parseResponse(body: Uint8Array): { response: AuthorizeResponse; raw: Record<string, unknown> } {
  const parsed = decodeJsonObject(body);
  const result = AuthorizeResponseSchema.safeParse(parsed);
  if (!result.success) {
    const where = result.error.issues[0]?.path.join('.') || '(root)';
    throw new AttemptFailure('invalid_response', `PDP response fails the schema at ${where}`);
  }
  return { response: result.data, raw: parsed };
}
