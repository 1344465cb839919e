/**
 * One in-process dev PDP for a test file, and the clients made against it (with its permit keys):
 * started before the file's tests, clients closed after each, the PDP stopped after the file.
 */
import { type DevPdp, type DevPdpOptions, startDevPdp } from '../../packages/dev-pdp/src/index.js';
import type { PepOptions } from '../../src/index.js';
import type { Clients } from './clients.js';
import { useServerSuite } from './server-suite.js';

/** What {@link useDevPdp} gives a test file. */
export interface DevPdpSuite {
  /** The running dev PDP (read it inside a test or hook, not at module load). */
  readonly pdp: DevPdp;
  /** Clients on the dev PDP: agent `support-ai`, its JWKS and issuer as permit keys, plus `defaults`. */
  readonly clients: Clients;
}

/**
 * Registers the file's hooks and returns the suite. Call it at the top level of a test file (or of a
 * `describe`, for a PDP per block).
 * @param options - `startDevPdp` options (`log` defaults to false)
 * @param defaults - client options over the suite's (`session`, `protocol`, ...)
 */
export function useDevPdp(options: DevPdpOptions, defaults: Partial<PepOptions> = {}): DevPdpSuite {
  const suite = useServerSuite<DevPdp>({
    start: () => startDevPdp({ log: false, ...options }),
    stop: (pdp) => pdp.close(),
    clientOptions: (pdp) => ({
      pdpUrl: pdp.url,
      agentId: 'support-ai',
      session: 'sess_1',
      permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
      ...defaults,
    }),
  });
  return {
    get pdp() {
      return suite.server;
    },
    clients: suite.clients,
  };
}
