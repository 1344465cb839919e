/**
 * jose, loaded on first use: a process that verifies no permit, or verifies them with `node:crypto`
 * only (EdDSA and ES256 with a public key, `signature.ts`), never loads it, and `import('agent-pep')`
 * does not pay for it (issue 30). The subpath entries load only what they use (jose's own index
 * loads all of JOSE).
 * @internal
 */

import type { createLocalJWKSet } from 'jose/jwks/local';
import type { createRemoteJWKSet, customFetch } from 'jose/jwks/remote';
import type { compactVerify } from 'jose/jws/compact/verify';

/** The parts of jose the permit and evidence checks use. */
export interface Jose {
  readonly compactVerify: typeof compactVerify;
  readonly createLocalJWKSet: typeof createLocalJWKSet;
  readonly createRemoteJWKSet: typeof createRemoteJWKSet;
  readonly customFetch: typeof customFetch;
}

let loading: Promise<Jose> | undefined;

/** jose's parts, loaded once (the same promise for every caller). */
export function loadJose(): Promise<Jose> {
  loading ??= Promise.all([
    import('jose/jws/compact/verify'),
    import('jose/jwks/local'),
    import('jose/jwks/remote'),
  ]).then(([verify, local, remote]) => ({
    compactVerify: verify.compactVerify,
    createLocalJWKSet: local.createLocalJWKSet,
    createRemoteJWKSet: remote.createRemoteJWKSet,
    customFetch: remote.customFetch,
  }));
  return loading;
}
