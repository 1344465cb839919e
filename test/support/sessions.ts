/**
 * Dev PDPs and clients for the session tests, closed together after each test.
 */
import { type DevPdp, type DevPdpOptions, startDevPdp } from '../../packages/dev-pdp/src/index.js';
import { createPep, type Pep } from '../../src/index.js';

/** Starts dev PDPs on one policy and clients bound to them; `closeAll()` closes every one. */
export interface SessionHarness {
  start(options?: Partial<DevPdpOptions>): Promise<DevPdp>;
  /** A client of agent `agent` in `session`, no retries, verifying permits against `pdp`. */
  pepOf(pdp: DevPdp, session: string, extra?: Record<string, unknown>): Pep;
  /** Closes something else with the rest. */
  track(x: { close(): Promise<unknown> | unknown }): void;
  closeAll(): Promise<void>;
}

export function sessionHarness(policy: unknown): SessionHarness {
  const open: { close(): Promise<unknown> | unknown }[] = [];
  return {
    async start(options = {}) {
      const pdp = await startDevPdp({ policy, log: false, ...options });
      open.push(pdp);
      return pdp;
    },
    pepOf(pdp, session, extra = {}) {
      const pep = createPep({
        pdpUrl: pdp.url,
        agentId: 'agent',
        session,
        retries: 0,
        permits: { keys: pdp.jwksUrl, issuer: pdp.issuer },
        ...extra,
      });
      open.push(pep);
      return pep;
    },
    track(x) {
      open.push(x);
    },
    async closeAll() {
      while (open.length > 0) await open.pop()?.close();
    },
  };
}
