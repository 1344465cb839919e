/**
 * The options `agent-pep hook <host>` and `agent-pep hook serve` share (docs/cli.md): the PDP, the
 * agent, the API key, the deadline, the protocol and what ESCALATE becomes; and the one client they
 * decide through.
 * @internal
 */
import type { ParseArgsConfig } from 'node:util';
import type { HostWire } from '../hooks/hosts/host.js';
import type { PepOptions } from '../options/pep.js';
import { createPep, type Pep } from '../pep.js';
import { NodeHttpDispatcher } from '../transport/node-http.js';
import { apiKeyFromEnv, protocolFlag } from './input.js';
import type { CliIo } from './io.js';
import { integerFlag, UsageError } from './usage.js';

/** The flags both commands take, for `parseArgs`. */
export const HOOK_FLAGS = {
  pdp: { type: 'string' },
  agent: { type: 'string' },
  'api-key-env': { type: 'string' },
  timeout: { type: 'string' },
  protocol: { type: 'string' },
  escalate: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** The hook's whole deadline by default, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 5000;

/** The flags as parsed. */
export interface HookFlagValues {
  pdp?: string | undefined;
  agent?: string | undefined;
  'api-key-env'?: string | undefined;
  timeout?: string | undefined;
  protocol?: string | undefined;
  escalate?: string | undefined;
}

/** What the flags give: the deadline, `--escalate` when given, and the client's options. */
export interface HookSettings {
  timeoutMs: number;
  escalate: 'ask' | 'deny' | undefined;
  pepOptions: PepOptions;
}

/**
 * Reads the shared flags.
 * @param transport - `node-http` for a process that sends one request (the process hook: undici's pool
 *   costs a hook process about a fifth of its start, issue 30), `pool` for the long-running endpoint
 * @throws UsageError naming the flag
 */
export function hookSettings(values: HookFlagValues, io: CliIo, transport: 'node-http' | 'pool'): HookSettings {
  if (values.pdp === undefined) throw new UsageError('--pdp URL is required');
  if (values.agent === undefined) throw new UsageError('--agent ID is required');
  const timeoutMs = integerFlag(values.timeout, 'timeout', 100, 60_000) ?? DEFAULT_TIMEOUT_MS;
  const protocol = protocolFlag(values.protocol);
  const escalate = values.escalate;
  if (escalate !== undefined && escalate !== 'ask' && escalate !== 'deny') {
    throw new UsageError('--escalate must be ask or deny');
  }
  const apiKey = values['api-key-env'] === undefined ? undefined : apiKeyFromEnv(values['api-key-env'], io.env);
  // The decision gets the deadline less a reserve for reading the event and writing the answer.
  const pepOptions: PepOptions = {
    pdpUrl: values.pdp,
    agentId: values.agent,
    session: 'agent-pep-hook',
    apiKey,
    timeoutMs: Math.max(50, timeoutMs - Math.min(500, Math.floor(timeoutMs / 4))),
    permits: false,
    protocol,
  };
  if (transport === 'node-http') {
    // The same transport checks run on it (src/transport/node-http.ts).
    pepOptions.dispatcher = new NodeHttpDispatcher() as unknown as NonNullable<PepOptions['dispatcher']>;
  }
  return { timeoutMs, escalate, pepOptions };
}

/**
 * What ESCALATE becomes for a host: `--escalate` when given, else the host's default.
 * @throws UsageError for `--escalate ask` with a host that cannot ask
 */
export function escalateFor(wire: HostWire, escalate: 'ask' | 'deny' | undefined): 'ask' | 'deny' {
  if (escalate === 'ask' && !wire.canAsk) {
    throw new UsageError(`--escalate ask is not possible with ${wire.name}: its hook cannot ask`);
  }
  return escalate ?? wire.escalateDefault;
}

/**
 * The client, or a usage error naming the flag that made it fail.
 * @throws UsageError
 */
export function hookPep(options: PepOptions): Pep {
  try {
    return createPep(options);
  } catch (error) {
    const option = (error as { option?: unknown }).option;
    const flag = option === 'pdpUrl' ? '--pdp' : option === 'agentId' ? '--agent' : 'an option';
    throw new UsageError(`${flag}: ${error instanceof Error ? error.message.split('\n')[0] : 'invalid'}`);
  }
}
