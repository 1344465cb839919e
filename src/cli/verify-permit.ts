/**
 * `agent-pep verify-permit`: checks a permit as the side-effecting service would (docs/permits.md and docs/cli.md) and prints its claims, or the `PermitVerificationError` code. Exit codes: 0 the
 * permit verifies, 1 it is refused, 2 usage error.
 *
 * No replay claim unless `--consume`: a one-shot process has no replay store of its own that a service
 * would ever see, so without `--consume` the claim step is answered "first use" by a store that
 * remembers nothing, and the permit stays usable. `--consume --redis URL` claims the `jti` in the Redis
 * store the services share (`agent-pep/redis`): the permit is then used up for all of them, and a
 * permit already used is `permit_replayed`.
 * @internal
 */
import { PermitVerificationError } from '../errors.js';
import { createPermitVerifier } from '../permit/verifier.js';
import type { ReplayStore } from '../replay/types.js';
import { jsonObjectFlag, type KeySource, readKeys, readStdin } from './input.js';
import type { CliIo } from './io.js';
import { EXIT, exitWith, integerFlag, parseCommandLine, UsageError, usageExit } from './usage.js';

export const USAGE = `Usage: agent-pep verify-permit --keys URL|FILE --issuer I --audience A
         --tool NAME --args JSON [options] [PERMIT | -]

Verifies a permit (a compact JWS) for exactly this tool call, as the service that runs it would:
signature, alg, typ, iss, aud, exp/nbf/iat, lifetime, tool and act_hash. Prints the claims as JSON
and exits 0, or prints the PermitVerificationError code (e.g. permit_args_mismatch) and exits 1.
The permit is read from the argument, or from stdin when it is - or absent.

Options:
  --keys URL|FILE       the PDP's public keys: a JWKS URL, or a file with a JWKS, a JWK or a
                        PEM public key (required)
  --issuer I            the expected iss (required)
  --audience A          this service's name, the expected aud (required; may be repeated)
  --tool NAME           the tool about to run (required)
  --args JSON           the arguments it will run with, a JSON object (required)
  --algorithms LIST     allowed algorithms, comma-separated (default EdDSA,ES256)
  --clock-tolerance SEC clock tolerance in seconds, 0-300 (default 5)
  --consume             also claim the permit's jti, so it can never be used again; needs
                        --redis (a one-shot process has no store a service would see)
  --redis URL           with --consume: the Redis the services share (redis:// or rediss://)
  --redis-prefix P      with --redis: the services' key prefix (default that of agent-pep/redis)
  -h, --help            show this help

Without --consume nothing is claimed: the permit stays usable, and a used one still verifies here.

Exit codes: 0 verified, 1 refused, 2 usage error.
`;

const COMMAND = 'verify-permit';

/** A store that never remembers: the claim step always answers "first use" (nothing is consumed). */
const NO_CLAIM: ReplayStore = { claim: () => Promise.resolve(true) };

/** The flags of `verify-permit`, as `parseArgs` takes them. */
const FLAGS = {
  keys: { type: 'string' },
  issuer: { type: 'string' },
  audience: { type: 'string', multiple: true },
  tool: { type: 'string' },
  args: { type: 'string' },
  algorithms: { type: 'string' },
  'clock-tolerance': { type: 'string' },
  consume: { type: 'boolean' },
  redis: { type: 'string' },
  'redis-prefix': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The flags as parsed. */
type VerifyFlags = ReturnType<typeof parseCommandLine<{ options: typeof FLAGS }>>['values'];

/** What the flags give once checked: the call to verify against, the keys and the clock tolerance. */
interface Checked {
  issuer: string;
  audience: string[];
  tool: string;
  args: Record<string, unknown>;
  keys: KeySource;
  tolerance: number | undefined;
}

/** Checks the flags and reads `--args` and `--keys`. @throws UsageError */
async function checkFlags(values: VerifyFlags, positionals: string[]): Promise<Checked> {
  if (values.issuer === undefined) throw new UsageError('--issuer I is required');
  if (values.audience === undefined) throw new UsageError('--audience A is required');
  if (values.tool === undefined) throw new UsageError('--tool NAME is required');
  if (values.args === undefined) throw new UsageError('--args JSON is required (use {} for none)');
  if (positionals.length > 1) throw new UsageError('give at most one permit (or - for stdin)');
  if (values.redis !== undefined && !values.consume) throw new UsageError('--redis is only used with --consume');
  if (values['redis-prefix'] !== undefined && values.redis === undefined) {
    throw new UsageError('--redis-prefix is only used with --redis');
  }
  if (values.consume && values.redis === undefined) {
    throw new UsageError('--consume needs --redis URL: a one-shot process has no replay store a service would see');
  }
  const args = jsonObjectFlag('args', values.args);
  const tolerance = integerFlag(values['clock-tolerance'], 'clock-tolerance', 0, 300);
  const keys = await readKeys(values.keys);
  return { issuer: values.issuer, audience: values.audience, tool: values.tool, args, keys, tolerance };
}

/** A replay store and how to close it. */
interface OpenStore {
  store: ReplayStore;
  close(): Promise<void>;
}

/**
 * The replay store of `--consume --redis URL`, or {@link NO_CLAIM} (nothing to close) without `--consume`.
 * Exits with a usage error for a bad URL or a missing `ioredis`.
 */
async function replayStoreOf(values: VerifyFlags, tolerance: number | undefined): Promise<OpenStore> {
  if (!values.consume || values.redis === undefined) return { store: NO_CLAIM, close: () => Promise.resolve() };
  try {
    // loaded only here: the Redis client is an optional peer dependency
    const { createRedisReplayStore } = await import('../replay/redis.js');
    const store = createRedisReplayStore({
      url: values.redis,
      ...(values['redis-prefix'] !== undefined ? { prefix: values['redis-prefix'] } : {}),
      ...(tolerance !== undefined ? { clockToleranceSec: tolerance } : {}),
    });
    return { store, close: () => store.close() };
  } catch (error) {
    if (error instanceof TypeError) usageExit(COMMAND, `--redis: ${error.message}`);
    exitWith(redisStoreProblem(error), EXIT.usage);
  }
}

/** The verifier the flags describe; a usage exit (after closing the store) for a bad option. */
async function verifierOf(
  values: VerifyFlags,
  checked: Checked,
  replay: OpenStore,
): Promise<ReturnType<typeof createPermitVerifier>> {
  try {
    return createPermitVerifier({
      keys: checked.keys,
      issuer: checked.issuer,
      audience: checked.audience,
      replayStore: replay.store,
      ...(values.algorithms !== undefined ? { algorithms: values.algorithms.split(',').map((a) => a.trim()) } : {}),
      ...(checked.tolerance !== undefined ? { clockToleranceSec: checked.tolerance } : {}),
    });
  } catch (error) {
    await replay.close();
    usageExit(COMMAND, (error as Error).message);
  }
}

/** Runs the command; resolves with the exit code (0 verified, 1 refused). */
export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine(COMMAND, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: FLAGS,
  });
  if (values.help) {
    io.stdout.write(USAGE);
    return EXIT.ok;
  }
  let checked: Checked;
  try {
    checked = await checkFlags(values, positionals);
  } catch (error) {
    usageExit(COMMAND, (error as Error).message);
  }
  const given = positionals[0];
  const permit = (given === undefined || given === '-' ? await readStdin(io.stdin) : given).trim();
  const replay = await replayStoreOf(values, checked.tolerance);
  const verifier = await verifierOf(values, checked, replay);
  try {
    const claims = await verifier.verify(permit, { tool: checked.tool, args: checked.args });
    io.stdout.write(`${JSON.stringify(claims, null, 2)}\n`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof PermitVerificationError)) throw error;
    io.stdout.write(`${error.code}\n`);
    io.stderr.write(`agent-pep: ${error.message}\n`);
    return EXIT.failure;
  } finally {
    await replay.close();
  }
}

/**
 * The one line for a Redis replay store that cannot be made: the package to install when `ioredis` (an
 * optional peer dependency) is missing, else the error's own message. @internal
 */
export function redisStoreProblem(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (e?.code === 'ERR_MODULE_NOT_FOUND' && typeof e.message === 'string' && e.message.includes("'ioredis'")) {
    return '--redis needs the package ioredis (an optional peer dependency): npm install ioredis';
  }
  return `cannot use the Redis replay store: ${typeof e?.message === 'string' ? e.message : 'unknown error'}`;
}
