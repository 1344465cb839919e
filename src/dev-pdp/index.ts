// STUB: replaced by the dev-pdp work (issue 4).
export interface DevPdpOptions { policy: unknown; host?: string; port?: number; apiKey?: string; audience?: string; permitTtlSec?: number; evidencePath?: string }
export async function startDevPdp(_options: DevPdpOptions): Promise<never> {
  throw new Error('not implemented');
}
