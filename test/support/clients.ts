/**
 * Clients made by a test, closed together afterwards (so no test leaves a connection pool open).
 */
import { createPep, type Pep, type PepOptions } from '../../src/index.js';

/** Makes clients from `defaults()` plus per-call overrides, and closes them all at once. */
export interface Clients {
  /** A new client: `createPep({ ...defaults(), ...extra })`, tracked. */
  client(extra?: Partial<PepOptions> | Record<string, unknown>): Pep;
  /** Tracks a client made another way, for {@link Clients.closeAll}. */
  track(pep: Pep): Pep;
  /** Closes every tracked client and forgets them. */
  closeAll(): Promise<void>;
}

/** @param defaults - read on every `client()` call, so it may use servers started in `beforeAll` */
export function createClients(defaults: () => PepOptions): Clients {
  const made: Pep[] = [];
  return {
    client(extra = {}) {
      return this.track(createPep({ ...defaults(), ...extra } as PepOptions));
    },
    track(pep) {
      made.push(pep);
      return pep;
    },
    async closeAll() {
      await Promise.all(made.splice(0).map((c) => c.close()));
    },
  };
}

/** One decision from a client made for it and closed after: `call(pep)` with `createPep(options)`. */
export async function decideOnce<T>(options: PepOptions, call: (pep: Pep) => Promise<T>): Promise<T> {
  const pep = createPep(options);
  try {
    return await call(pep);
  } finally {
    await pep.close();
  }
}
