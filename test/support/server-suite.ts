/**
 * A server for a test file and the clients made against it: started before the file's tests, the
 * clients closed (and `reset` run) after each test, the server stopped after the file. The shared
 * part of {@link useFakePdp} and {@link useDevPdp}.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { PepOptions } from '../../src/index.js';
import { type Clients, createClients } from './clients.js';

/** A running server and the clients on it. */
export interface ServerSuite<S> {
  /** The running server (read it inside a test or hook, not at module load). */
  readonly server: S;
  /** Clients made with `clientOptions(server)`. */
  readonly clients: Clients;
}

/** How to start, reset and stop one kind of server, and the client options it implies. */
export interface ServerKind<S> {
  start(): Promise<S>;
  stop(server: S): Promise<void>;
  clientOptions(server: S): PepOptions;
  /** Run after each test, after the clients closed. */
  reset?(server: S): void;
}

/** Registers the file's hooks; call it at the top level of a test file (or of a `describe`). */
export function useServerSuite<S>(kind: ServerKind<S>): ServerSuite<S> {
  let server: S | undefined;
  function running(): S {
    if (server === undefined) throw new Error('the test server is read before beforeAll ran');
    return server;
  }
  const clients = createClients(() => kind.clientOptions(running()));
  beforeAll(async () => {
    server = await kind.start();
  });
  afterEach(async () => {
    await clients.closeAll();
    kind.reset?.(running());
  });
  afterAll(async () => {
    if (server !== undefined) await kind.stop(server);
  });
  return {
    get server() {
      return running();
    },
    clients,
  };
}
