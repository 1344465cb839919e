/**
 * A service that verifies permits before it acts: no valid permit for exactly this tool and these
 * args, no refund. Start the local reference PDP with the service's name as the permits' audience:
 *
 *   npx agent-pep dev-pdp --policy examples/quickstart/policy.json --audience payments-service
 *   npm run example:service                     (PDP_URL and PORT to change the defaults)
 *
 * The agent side calls it with `authorization: Permit <permitId>` (see examples/payments-service/ for
 * both sides together). It prints its URL, and stops on Ctrl-C or SIGTERM.
 * @module
 */

// #region service
import { createServer } from 'node:http';
import { createPermitVerifier, PermitVerificationError } from 'agent-pep';

// The base URL without its trailing `/`, so the JWKS URL and the issuer match the PDP's (one rule: docs/api.md).
const pdpUrl = (process.env.PDP_URL ?? 'http://127.0.0.1:8787').replace(/\/+$/, '');
const verifier = createPermitVerifier({
  keys: `${pdpUrl}/.well-known/jwks.json`,
  issuer: pdpUrl,
  audience: 'payments-service', // the permits' `aud`: the dev PDP's --audience
});

const server = createServer(async (req, res) => {
  const reply = (status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  let args: Record<string, unknown>;
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    args = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return reply(400, { error: 'invalid_json' });
  }
  const permit = /^Permit (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
  try {
    // Signature, issuer, audience, expiry, tool and args; then the permit is used up (one use).
    await verifier.verify(permit, { tool: 'refund_payment', args });
  } catch (err) {
    if (err instanceof PermitVerificationError) return reply(403, { error: err.code });
    return reply(500, { error: 'internal_error' });
  }
  // Only now: perform the refund, with exactly the args the permit is bound to.
  return reply(200, { refunded: args.amount });
});
server.listen(Number(process.env.PORT ?? 8790), '127.0.0.1');
// #endregion service

server.once('listening', () => {
  console.log(`payments service on http://127.0.0.1:${(server.address() as { port: number }).port}`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
