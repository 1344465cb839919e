/**
 * What `agent-pep/redis` and `agent-pep/dev-pdp` resolve to on Cloudflare Workers (`workerd`) and
 * Vercel Edge (`edge-light`), through the package's conditional exports: both need Node's sockets
 * and processes (docs/runtimes.md). Importing it throws at once, naming what to use instead,
 * rather than failing later inside a bundle.
 * @packageDocumentation
 */
throw new Error(
  'agent-pep: this entry needs Node, Deno or Bun (TCP sockets). On Cloudflare Workers use agent-pep/replay/durable-object for permits; the dev PDP runs beside the Worker, in Node.',
);

export {};
