/**
 * Small HTTP servers for tests: listen on 127.0.0.1, port 0, and close without waiting on keep-alive.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on 127.0.0.1, a free port; resolves `http://127.0.0.1:<port>`. */
export function listen(server: Server): Promise<string> {
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

/** Closes `server`, dropping open connections first. */
export function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
