/**
 * The mark of a dispatcher the client owns (node:http's, `node-http.ts`): it is sent string bodies and
 * destroyed by `close()`. A symbol rather than `instanceof`, so that `http.ts` does not import
 * `node-http.ts` (and with it `node:http`) on runtimes that have no Node built-ins.
 * @internal
 */
export const OWNED_DISPATCHER: unique symbol = Symbol.for('agent-pep.ownedDispatcher');
