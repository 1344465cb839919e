/**
 * `agent-pep/dev-pdp`: the local reference PDP (CONTRACT.md section 6). It speaks the wire protocol of
 * section 3, signs permits as in section 4, keeps a hash-chained signed evidence log, holds
 * escalations for review and injects faults on demand, so agents and services can be developed and
 * their fail-closed paths tested without a production PDP.
 * @packageDocumentation
 */
import type { AddressInfo } from 'node:net';
import type { JSONWebKeySet } from 'jose';
import type { EvidenceRecord } from '../evidence/record.js';
import { EscalationBook, type EscalationResolution } from './escalations.js';
import { EvidenceLog } from './evidence.js';
import { type Fault, validateFault } from './faults.js';
import { compilePolicy } from './policy.js';
import { createPdpServer } from './server.js';
import { createSigningKey, type DevPdpKeySource } from './signing.js';

export type { EvidenceRecord } from '../evidence/record.js';
export type { EscalationErrorCode, EscalationResolution } from './escalations.js';
export { EscalationError } from './escalations.js';
export type { Evaluation, EvaluationInput } from './evaluate.js';
export { evaluatePolicy } from './evaluate.js';
export type { Fault } from './faults.js';
export type { ConditionSpec, LatchSpec, PolicyIssue, PolicyScalar, PolicySpec } from './policy.js';
export { compilePolicy, PolicyError, policyJsonSchema } from './policy.js';
export type { DevPdpErrorCode } from './server.js';
export type { DevPdpKeySource } from './signing.js';

/** Options of {@link startDevPdp}. */
export interface DevPdpOptions {
  /** The policy (CONTRACT.md section 6): an object, or its JSON text. Validated and compiled at start. */
  policy: unknown;
  /** Interface to listen on. @defaultValue '127.0.0.1' */
  host?: string;
  /** TCP port; 0 picks a free one (see `url`). @defaultValue 0 */
  port?: number;
  /** When set, every request but the JWKS must carry `authorization: Bearer <apiKey>` (else 401). */
  apiKey?: string;
  /**
   * When set, `POST /api/escalations/{id}` demands `authorization: Bearer <reviewerApiKey>` instead of
   * `apiKey`, so an agent holding the decision key cannot approve its own escalation. Default: `apiKey`.
   */
  reviewerApiKey?: string;
  /** The permits' `aud` claim: the service that executes the tool calls. @defaultValue 'agent-pep' */
  audience?: string;
  /** Permit lifetime `exp - iat`, in seconds, 1 to 300. @defaultValue 60 */
  permitTtlSec?: number;
  /** Also write the evidence log to this file as JSON Lines; it must be new or empty. */
  evidencePath?: string;
  /** The Ed25519 signing key (a file path, a private JWK, or a KeyObject/CryptoKey). @defaultValue a fresh key */
  key?: DevPdpKeySource;
  /** Largest accepted request body, in bytes; larger gets 413. @defaultValue 1048576 (1 MiB) */
  maxBodyBytes?: number;
  /** Called after every decision with its evidence record (a copy). Errors are ignored. */
  onDecision?: (record: EvidenceRecord) => void;
}

/** A running dev PDP. */
export interface DevPdp {
  /** Base URL, like `http://127.0.0.1:54321`; pass it to `createPep({ pdpUrl })`. */
  readonly url: string;
  /** Where the public keys are served: `${url}/.well-known/jwks.json`. */
  readonly jwksUrl: string;
  /** The permits' `iss` claim (the same as `url`). */
  readonly issuer: string;
  /** The permits' `aud` claim. */
  readonly audience: string;
  /** The signing key's id (RFC 7638 thumbprint), the `kid` of permits and evidence signatures. */
  readonly kid: string;
  /** The public keys, as served at `jwksUrl`. */
  readonly jwks: JSONWebKeySet;
  /** A copy of the evidence log so far, in order. */
  evidence(): EvidenceRecord[];
  /**
   * Injects a fault on `POST /api/policy/authorize` from the next request on; `null` behaves again.
   * @throws TypeError for an unknown fault shape
   */
  setFault(fault: Fault | null): void;
  /**
   * Resolves an open escalation: the next identical request (same agent, session, tool and
   * `act_hash`) gets a one-time ALLOW with a permit (`approve`) or a BLOCK (`deny`).
   * @throws EscalationError `escalation_not_found` for an unknown id, `escalation_already_resolved` for a second resolution
   */
  resolveEscalation(id: string, resolution: EscalationResolution): void;
  /** Stops listening, destroys every open socket (hung ones too) and flushes the evidence file. Idempotent. */
  close(): Promise<void>;
}

const MAX_PERMIT_TTL_SEC = 300;

function checkOptions(options: DevPdpOptions): void {
  if (typeof options !== 'object' || options === null) throw new TypeError('options must be an object');
  const { host, port, apiKey, reviewerApiKey, audience, permitTtlSec, evidencePath, maxBodyBytes, onDecision } =
    options;
  if (host !== undefined && (typeof host !== 'string' || host.length === 0))
    throw new TypeError('host must be a non-empty string');
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new TypeError('port must be an integer from 0 to 65535');
  }
  if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey.length === 0))
    throw new TypeError('apiKey must be a non-empty string');
  if (reviewerApiKey !== undefined && (typeof reviewerApiKey !== 'string' || reviewerApiKey.length === 0))
    throw new TypeError('reviewerApiKey must be a non-empty string');
  if (reviewerApiKey !== undefined && reviewerApiKey === apiKey)
    throw new TypeError('reviewerApiKey must differ from apiKey');
  if (audience !== undefined && (typeof audience !== 'string' || audience.length === 0)) {
    throw new TypeError('audience must be a non-empty string');
  }
  if (
    permitTtlSec !== undefined &&
    (!Number.isInteger(permitTtlSec) || permitTtlSec < 1 || permitTtlSec > MAX_PERMIT_TTL_SEC)
  ) {
    throw new TypeError(`permitTtlSec must be an integer from 1 to ${MAX_PERMIT_TTL_SEC}`);
  }
  if (evidencePath !== undefined && (typeof evidencePath !== 'string' || evidencePath.length === 0)) {
    throw new TypeError('evidencePath must be a non-empty string');
  }
  if (maxBodyBytes !== undefined && (!Number.isInteger(maxBodyBytes) || maxBodyBytes < 1024)) {
    throw new TypeError('maxBodyBytes must be an integer of at least 1024');
  }
  if (onDecision !== undefined && typeof onDecision !== 'function')
    throw new TypeError('onDecision must be a function');
}

/**
 * Starts the local reference PDP.
 *
 * @param options - `{ policy, host?, port?, apiKey?, reviewerApiKey?, audience?, permitTtlSec?, evidencePath?, key? }`
 * @returns the running PDP: `url`, `jwksUrl`, `issuer`, `evidence()`, `setFault()`, `resolveEscalation()`, `close()`
 * @throws PolicyError (a TypeError) listing every problem of an invalid policy by path and reason
 * @throws TypeError for a bad option or key
 * @remarks A development and test tool, not a production PDP: one process, state in memory, a
 * signing key made at start unless one is given (permits from an earlier run do not verify against a
 * new key). It binds to 127.0.0.1 unless told otherwise. Regexes in the policy are trusted input.
 * @example
 * ```ts
 * import { startDevPdp } from 'agent-pep/dev-pdp';
 * const pdp = await startDevPdp({ policy: { agents: ['support-ai'], latches: [] } });
 * const pep = createPep({ pdpUrl: pdp.url, agentId: 'support-ai', session: 's1',
 *   permits: { keys: pdp.jwksUrl, issuer: pdp.issuer } });
 * // ...
 * await pdp.close();
 * ```
 */
export async function startDevPdp(options: DevPdpOptions): Promise<DevPdp> {
  checkOptions(options);
  const policy = compilePolicy(options.policy);
  const host = options.host ?? '127.0.0.1';
  const audience = options.audience ?? 'agent-pep';
  const key = await createSigningKey(options.key);
  const evidence = await EvidenceLog.open(key, options.evidencePath);
  const escalations = new EscalationBook();
  let fault: Readonly<Fault> | null = null;
  let issuer = '';
  const pdpServer = createPdpServer({
    policy,
    key,
    evidence,
    escalations,
    audience,
    permitTtlSec: options.permitTtlSec ?? 60,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    issuer: () => issuer,
    fault: () => fault,
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...(options.reviewerApiKey !== undefined ? { reviewerApiKey: options.reviewerApiKey } : {}),
    ...(options.onDecision !== undefined ? { onDecision: options.onDecision } : {}),
  });
  const { server } = pdpServer;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await evidence.close();
    throw error;
  }
  const address = server.address() as AddressInfo;
  const hostPart =
    address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  issuer = `http://${hostPart}:${address.port}`;
  let closed: Promise<void> | undefined;
  return Object.freeze({
    url: issuer,
    jwksUrl: `${issuer}/.well-known/jwks.json`,
    issuer,
    audience,
    kid: key.kid,
    jwks: structuredClone(key.jwks) as JSONWebKeySet,
    evidence: () => evidence.records(),
    setFault(next: Fault | null) {
      fault = validateFault(next);
    },
    resolveEscalation(id: string, resolution: EscalationResolution) {
      escalations.resolve(id, resolution);
    },
    close() {
      closed ??= pdpServer.close().then(() => evidence.close());
      return closed;
    },
  });
}
