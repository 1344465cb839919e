// The floors that do the work the contract requires (issue 43): what a `checkInput`, an
// `authorizeAction` and an 8-call `authorizeActions` must do on every call, written by hand as directly as Node allows, so
// that the gated ratios price agent-pep's own code and nothing the contract asks of any client.
//
// Per call, the text floor: a fresh request id (CONTRACT.md section 3: one per decision); the request's
// text written by hand (the content checked for what JSON must escape, `JSON.stringify` only when it
// has some); one undici `dispatch`; the answer's checks (status 200, a JSON content type, `JSON.parse`,
// a verdict, the request id and stage echoes, and the fields a text stage must not carry).
//
// Per call, the action floors: a fresh request id (CONTRACT.md section 3: one per decision); the args'
// RFC 8785 text (`canonicalize`), sent as the args and hashed for `act_hash` (section 4: SHA-256,
// base64url, over `{"args":...,"tool":...}`, node:crypto's one-shot `hash`); one undici `dispatch` on
// a `Pool` with agent-pep's options; the answer's checks a hand-written client would make (status 200,
// a JSON content type, `JSON.parse`, the verdict, the request id and stage echoes); and rule 5 (the
// permit's payload base64url-decoded and `JSON.parse`d without trust, its `tool`, `sub`, `sid` and
// `act_hash` compared with what was asked).
//
// Also, as every client the contract describes must (section 3): a deadline a request (a timer armed
// at dispatch, cleared at the end, aborting the request when it fires), the body's size cap, and the
// body decoded as UTF-8 that must be valid (fatal decoding); and the members read are checked for
// their types (a verdict or decision, a permit that is a string, a context that is an object).
//
// What they leave out, and agent-pep does (its own cost in the ratio): I-JSON (no duplicate member
// names), the rest of the answer's schema member by member, the fields-in-their-place rules, the
// in-flight registry, the tool name's normalization.
import { hash, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';

/** The deadline of one floor request (agent-pep's default `timeoutMs`), and the body's cap (its default `maxResponseBytes`). */
const DEADLINE_MS = 5000;
const MAX_BYTES = 1024 * 1024;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One POST by `dispatch`, the body collected and parsed: the status, the content type, the JSON and its text.
 * @returns {Promise<{ status: number, type: string | undefined, body: any, text: string }>}
 */
export function dispatchJson(pool, origin, path, headers, body) {
  return new Promise((resolve, reject) => {
    let status = 0;
    let type;
    let one;
    let more;
    let size = 0;
    let controller;
    const timer = setTimeout(() => controller?.abort(new Error('deadline')), DEADLINE_MS);
    const fail = (err) => {
      clearTimeout(timer);
      reject(err);
    };
    pool.dispatch(
      { origin, path, method: 'POST', headers, body },
      {
        onRequestStart(c) {
          controller = c;
        },
        onResponseStart(_c, statusCode, resHeaders) {
          status = statusCode;
          type = resHeaders['content-type'];
        },
        onResponseData(c, chunk) {
          size += chunk.length;
          if (size > MAX_BYTES) return c.abort(new Error('too large'));
          if (one === undefined) one = chunk;
          else {
            if (more === undefined) more = [one];
            more.push(chunk);
          }
        },
        onResponseEnd() {
          clearTimeout(timer);
          try {
            const bytes = more === undefined ? (one ?? Buffer.alloc(0)) : Buffer.concat(more);
            const text = UTF8.decode(bytes);
            resolve({ status, type, body: JSON.parse(text), text });
          } catch (err) {
            reject(err);
          }
        },
        onResponseError(_c, err) {
          fail(err);
        },
      },
    );
  });
}

/**
 * The request headers of one call: the static ones (exactly `content-type`, `accept` and `user-agent`,
 * as agent-pep sends them) and the call's `x-request-id`, written as an object literal: a spread of a
 * plain object (`{ ...headers, 'x-request-id': id }`) costs about 0.4 µs on Node 20, a literal a few
 * nanoseconds (agent-pep spreads a frozen object, about 50 ns).
 * @returns a function of the request id
 */
function headersWith(headers) {
  const names = Object.keys(headers).sort().join(',');
  if (names !== 'accept,content-type,user-agent')
    throw new Error(`floor headers must be exactly accept, content-type and user-agent, not ${names}`);
  const type = headers['content-type'];
  const accept = headers.accept;
  const agent = headers['user-agent'];
  return (requestId) => ({ 'content-type': type, accept, 'user-agent': agent, 'x-request-id': requestId });
}

/** A JSON content type: `application/json`, with or without parameters. */
const isJson = (type) =>
  typeof type === 'string' && (type === 'application/json' || type.startsWith('application/json;'));

/** The permit's payload, decoded without trust (base64url, UTF-8, JSON), or undefined. */
function payloadOf(permit) {
  if (typeof permit !== 'string') return undefined;
  const a = permit.indexOf('.');
  const b = permit.indexOf('.', a + 1);
  if (a < 0 || b < 0) return undefined;
  try {
    return JSON.parse(Buffer.from(permit.slice(a + 1, b), 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Rule 5: the permit decodes to the tool, agent, session and args asked about. */
function permitMatches(permit, tool, toolJson, argsJson, agentId, session) {
  const p = payloadOf(permit);
  return (
    p !== undefined &&
    p !== null &&
    p.tool === tool &&
    p.sub === agentId &&
    p.sid === session &&
    p.act_hash === hash('sha256', `{"args":${argsJson},"tool":${toolJson}}`, 'base64url')
  );
}

/** The verdicts (CONTRACT.md section 3). */
const VERDICTS = new Set(['ALLOW', 'WARN', 'BLOCK', 'ESCALATE']);

/** A character JSON escapes in a string, or a surrogate (a lone one is escaped; a pair goes the slow way too). */
const NOT_VERBATIM = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * The floor of `checkInput` (the agent-pep protocol): see the file's header. The content is a string
 * without lone surrogates (the caller's checks are not timed here).
 * @returns a call resolving true for a verdict that is enforceable on a text stage
 */
export function textFloor({ pool, origin, path, headers, agentId, session, content }) {
  const prefix = `{"agentId":${JSON.stringify(agentId)},"session":${JSON.stringify(session)},"stage":"input","requestId":"`;
  const withId = headersWith(headers);
  return async () => {
    const requestId = randomUUID();
    const text = NOT_VERBATIM.test(content) ? JSON.stringify(content) : `"${content}"`;
    const body = `${prefix}${requestId}","content":${text}}`;
    const r = await dispatchJson(pool, origin, path, withId(requestId), body);
    const d = r.body;
    return (
      r.status === 200 &&
      isJson(r.type) &&
      typeof d === 'object' &&
      d !== null &&
      VERDICTS.has(d.verdict) &&
      (d.reason === undefined || typeof d.reason === 'string') &&
      d.requestId === requestId &&
      d.stage === 'input' &&
      d.permitId === undefined &&
      d.transformedArgs === undefined &&
      d.route === undefined &&
      (d.verdict === 'WARN' ? typeof d.transformedContent === 'string' : d.transformedContent === undefined)
    );
  };
}

/**
 * The floor of `authorizeAction` with `permits` (the agent-pep protocol): see the file's header.
 * `tool` is already normalized. `headers` are the static ones (content type, accept, user agent).
 * @returns a call resolving true for an ALLOW whose permit is bound to the action
 */
export function permitFloor({ pool, origin, path, headers, agentId, session, tool, args }) {
  const toolJson = JSON.stringify(tool);
  const prefix = `{"agentId":${JSON.stringify(agentId)},"session":${JSON.stringify(session)},"stage":"action","requestId":"`;
  const withId = headersWith(headers);
  return async () => {
    const requestId = randomUUID();
    const argsJson = canonicalize(args);
    const body = `${prefix}${requestId}","tool":${toolJson},"args":${argsJson}}`;
    const r = await dispatchJson(pool, origin, path, withId(requestId), body);
    const d = r.body;
    return (
      r.status === 200 &&
      isJson(r.type) &&
      typeof d === 'object' &&
      d !== null &&
      d.verdict === 'ALLOW' &&
      typeof d.permitId === 'string' &&
      (d.reason === undefined || typeof d.reason === 'string') &&
      d.requestId === requestId &&
      d.stage === 'action' &&
      permitMatches(d.permitId, tool, toolJson, argsJson, agentId, session)
    );
  };
}

/**
 * The floor of `authorizeActions` over AuthZEN (CONTRACT.md section 9): one `evaluations` request of
 * `calls.length` items, each with its own request id in its `context`, the request with its own
 * `x-request-id`; per item of the answer, `decision: true` and rule 5 on `context.permitId`.
 * `calls` are `{ tool, args }` with normalized tool names.
 * @returns a call resolving true when every item is an ALLOW whose permit is bound to its call
 */
export function batchFloor({ pool, origin, path, headers, agentId, session, calls }) {
  const subject = `{"subject":{"type":"agent","id":${JSON.stringify(agentId)}},"action":{"name":"call"},"resource":{"type":"tool","id":`;
  const sessionJson = JSON.stringify(session);
  const toolJsons = calls.map((c) => JSON.stringify(c.tool));
  const withId = headersWith(headers);
  return async () => {
    const n = calls.length;
    const argsJsons = new Array(n);
    let body = '{"options":{"evaluations_semantic":"execute_all"},"evaluations":[';
    for (let i = 0; i < n; i++) {
      argsJsons[i] = canonicalize(calls[i].args);
      body += `${i === 0 ? '' : ','}${subject}${toolJsons[i]},"properties":{"args":${argsJsons[i]}}},"context":{"session":${sessionJson},"requestId":"${randomUUID()}"}}`;
    }
    body += ']}';
    const r = await dispatchJson(pool, origin, path, withId(randomUUID()), body);
    const items = r.body?.evaluations;
    if (r.status !== 200 || !isJson(r.type) || !Array.isArray(items) || items.length !== n) return false;
    for (let i = 0; i < n; i++) {
      const e = items[i];
      if (typeof e !== 'object' || e === null || e.decision !== true) return false;
      if (typeof e.context !== 'object' || e.context === null || typeof e.context.permitId !== 'string') return false;
      if (!permitMatches(e.context?.permitId, calls[i].tool, toolJsons[i], argsJsons[i], agentId, session))
        return false;
    }
    return true;
  };
}
