/**
 * `agent-pep/internal`: the building blocks that the reference PDP package (`@agent-pep/dev-pdp`)
 * shares with the SDK, so that both read the wire, hash actions and chain evidence with one code:
 * the verdict and stage tuples, strict JSON (RFC 7493 I-JSON) decoding, RFC 8785 action hashing, tool
 * name normalization, the evidence record and its verification, the option kit, one deadline helper,
 * and the command line's input and usage helpers.
 *
 * @remarks Not a public API: it has no semver promise and may change in any release. Applications use
 * the documented entries (`agent-pep`, `agent-pep/redis`, the adapters, `agent-pep/dev-pdp`).
 * @packageDocumentation
 * @internal
 */
export * from './cli/input.js';
export * from './cli/io.js';
export * from './cli/usage.js';
export * from './decision.js';
export * from './evidence/record.js';
export * from './evidence/verify.js';
export * from './internal/deadline.js';
export * from './internal/json.js';
export * from './internal/json-position.js';
export * from './internal/option-kit.js';
export * from './internal/sha256.js';
export * from './internal/tool-name.js';
export * from './permit/claims.js';
export * from './permit/hash.js';
export * from './wire/json.js';
export * from './wire/lines.js';
