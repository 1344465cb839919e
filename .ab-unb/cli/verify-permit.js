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
import { jsonObjectFlag, readKeys, readStdin } from './input.js';
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
const NO_CLAIM = { claim: () => Promise.resolve(true) };
/** Runs the command; resolves with the exit code (0 verified, 1 refused). */
export async function run(argv, io) {
    const { values, positionals } = parseCommandLine(COMMAND, {
        args: argv,
        strict: true,
        allowPositionals: true,
        options: {
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
        },
    });
    if (values.help) {
        io.stdout.write(USAGE);
        return EXIT.ok;
    }
    let args;
    let keys;
    let tolerance;
    try {
        if (values.issuer === undefined)
            throw new UsageError('--issuer I is required');
        if (values.audience === undefined)
            throw new UsageError('--audience A is required');
        if (values.tool === undefined)
            throw new UsageError('--tool NAME is required');
        if (values.args === undefined)
            throw new UsageError('--args JSON is required (use {} for none)');
        if (positionals.length > 1)
            throw new UsageError('give at most one permit (or - for stdin)');
        if (values.redis !== undefined && !values.consume)
            throw new UsageError('--redis is only used with --consume');
        if (values['redis-prefix'] !== undefined && values.redis === undefined) {
            throw new UsageError('--redis-prefix is only used with --redis');
        }
        if (values.consume && values.redis === undefined) {
            throw new UsageError('--consume needs --redis URL: a one-shot process has no replay store a service would see');
        }
        args = jsonObjectFlag('args', values.args);
        tolerance = integerFlag(values['clock-tolerance'], 'clock-tolerance', 0, 300);
        keys = await readKeys(values.keys);
    }
    catch (error) {
        usageExit(COMMAND, error.message);
    }
    const given = positionals[0];
    const permit = (given === undefined || given === '-' ? await readStdin(io.stdin) : given).trim();
    let replayStore = NO_CLAIM;
    let closeStore;
    if (values.consume && values.redis !== undefined) {
        try {
            // loaded only here: the Redis client is an optional peer dependency
            const { createRedisReplayStore } = await import('../replay/redis.js');
            const store = createRedisReplayStore({
                url: values.redis,
                ...(values['redis-prefix'] !== undefined ? { prefix: values['redis-prefix'] } : {}),
                ...(tolerance !== undefined ? { clockToleranceSec: tolerance } : {}),
            });
            replayStore = store;
            closeStore = () => store.close();
        }
        catch (error) {
            if (error instanceof TypeError)
                usageExit(COMMAND, `--redis: ${error.message}`);
            exitWith(redisStoreProblem(error), EXIT.usage);
        }
    }
    let verifier;
    try {
        verifier = createPermitVerifier({
            keys,
            issuer: values.issuer,
            audience: values.audience,
            replayStore,
            ...(values.algorithms !== undefined ? { algorithms: values.algorithms.split(',').map((a) => a.trim()) } : {}),
            ...(tolerance !== undefined ? { clockToleranceSec: tolerance } : {}),
        });
    }
    catch (error) {
        await closeStore?.();
        usageExit(COMMAND, error.message);
    }
    try {
        const claims = await verifier.verify(permit, { tool: values.tool, args });
        io.stdout.write(`${JSON.stringify(claims, null, 2)}\n`);
        return EXIT.ok;
    }
    catch (error) {
        if (!(error instanceof PermitVerificationError))
            throw error;
        io.stdout.write(`${error.code}\n`);
        io.stderr.write(`agent-pep: ${error.message}\n`);
        return EXIT.failure;
    }
    finally {
        await closeStore?.();
    }
}
/**
 * The one line for a Redis replay store that cannot be made: the package to install when `ioredis` (an
 * optional peer dependency) is missing, else the error's own message. @internal
 */
export function redisStoreProblem(error) {
    const e = error;
    if (e?.code === 'ERR_MODULE_NOT_FOUND' && typeof e.message === 'string' && e.message.includes("'ioredis'")) {
        return '--redis needs the package ioredis (an optional peer dependency): npm install ioredis';
    }
    return `cannot use the Redis replay store: ${typeof e?.message === 'string' ? e.message : 'unknown error'}`;
}
