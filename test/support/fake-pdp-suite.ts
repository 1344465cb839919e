/**
 * One recording fake PDP for a test file, and the clients made against it: started before the file's
 * tests, reset after each (handler back to {@link allowEcho}, recorded requests cleared, clients
 * closed), stopped after the file.
 */
import type { PepOptions } from '../../src/index.js';
import type { Clients } from './clients.js';
import { allowEcho, type FakePdp, startFakePdp } from './fake-pdp.js';
import { useServerSuite } from './server-suite.js';

/** What {@link useFakePdp} gives a test file. */
export interface FakePdpSuite {
  /** The running fake PDP (read it inside a test or hook, not at module load). */
  readonly pdp: FakePdp;
  /** Clients on `{ pdpUrl: pdp.url, agentId: 'support-ai', session: 'sess_1', ...defaults }`. */
  readonly clients: Clients;
}

/**
 * Registers the file's hooks and returns the suite. Call it at the top level of a test file.
 * @param defaults - client options added to the fake PDP's URL, agent `support-ai` and session `sess_1`
 */
export function useFakePdp(defaults: Partial<PepOptions> = {}): FakePdpSuite {
  const suite = useServerSuite<FakePdp>({
    start: () => startFakePdp(),
    stop: (pdp) => pdp.close(),
    clientOptions: (pdp) => ({ pdpUrl: pdp.url, agentId: 'support-ai', session: 'sess_1', ...defaults }),
    reset(pdp) {
      pdp.handler = allowEcho;
      pdp.received.length = 0;
    },
  });
  return {
    get pdp() {
      return suite.server;
    },
    clients: suite.clients,
  };
}
