/**
 * Model-request caps in the adapters (docs/interceptors.md, "Model requests"): whether an adapter
 * checks each model request, and the refusal a host that cannot apply a change gets.
 * @internal
 */

import { refusalError } from '../enforce/guard.js';
import type { PolicyEnforcementError } from '../errors.js';
import type { ModelRequest } from '../options/interceptors.js';
import type { Enforcement } from './kit.js';

/**
 * Whether an adapter checks each model request: `true` always, `false` never, unset when the client
 * has `modelRequest` interceptors (a PDP that caps model requests needs `true`).
 */
export function checksModelRequests(enforcement: Enforcement, option: boolean | undefined): boolean {
  return option ?? enforcement.hasModelRequestInterceptors;
}

/**
 * The settings to send, or the error that stops the model call: a deny or BLOCK, or a change the host
 * cannot apply (`cannot` names the settings this host cannot change, e.g. `model` in the AI SDK's
 * middleware): a synthesized BLOCK `ambiguous_decision`, so nothing is sent with settings nobody allowed.
 */
export async function decideSettings(
  enforcement: Enforcement,
  asked: ModelRequest,
  opts: unknown,
  cannot: readonly (keyof ModelRequest)[],
): Promise<ModelRequest | PolicyEnforcementError> {
  const r = await enforcement.decideModelRequest(asked, opts);
  if (r.kind === 'refused') return refusalError(r);
  for (const key of cannot) {
    if (r.request[key] !== asked[key]) {
      const message = `the model request's ${key} was changed, which this host cannot apply`;
      return refusalError(enforcement.refuse({ stage: 'context_egress' }, 'ambiguous_decision', message));
    }
  }
  return r.request;
}
