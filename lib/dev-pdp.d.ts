/**
 * `agent-pep/dev-pdp`: the local reference PDP (docs/dev-pdp.md), re-exported from its own package,
 * `@agent-pep/dev-pdp` (an optional peer: `npm install -D @agent-pep/dev-pdp`).
 * @packageDocumentation
 */
export * from '@agent-pep/dev-pdp';
