/**
 * `agent-pep evidence verify FILE --keys URL|FILE`: checks a PDP's evidence log (JSON Lines, as the
 * dev PDP writes with `--evidence` / `evidencePath`) with `verifyEvidence` (docs/dev-pdp.md and docs/cli.md) and prints `{ ok, count }` or `{ ok: false, index, reason }`. Exit codes: 0 intact, 1 not, 2
 * usage error.
 * @internal
 */
import { readFile } from 'node:fs/promises';
import { verifyEvidence } from '../evidence/verify.js';
import { parseJsonLines } from '../wire/lines.js';
import { readKeys, readStdin } from './input.js';
import { EXIT, parseCommandLine, systemReason, UsageError, usageExit } from './usage.js';
export const USAGE = `Usage: agent-pep evidence verify FILE --keys URL|FILE

Verifies an evidence log (JSON Lines, one record a line; - reads stdin): every record's hash, its
link to the previous record, its sequence number and its signature by the PDP's key. Prints
{ "ok": true, "count": N }, or { "ok": false, "index": I, "reason": R } for the first record
(0-based line index) that is edited, missing, out of order, or signed by another key.

Options:
  --keys URL|FILE   the PDP's public keys: a JWKS URL, or a file with a JWKS, a JWK or a PEM
                    public key (required)
  -h, --help        show this help

Exit codes: 0 intact, 1 not intact (or the keys could not be fetched), 2 usage error.
`;
const COMMAND = 'evidence verify';
/** Runs `evidence <subcommand>` (only `verify` exists); resolves with the exit code (0 intact, 1 not). */
export async function run(argv, io) {
    const [sub, ...rest] = argv;
    if (sub === '--help' || sub === '-h') {
        io.stdout.write(USAGE);
        return EXIT.ok;
    }
    if (sub !== 'verify') {
        usageExit('evidence verify', sub === undefined ? 'a subcommand is required: verify' : `unknown subcommand ${JSON.stringify(sub.slice(0, 40))}`);
    }
    const { values, positionals } = parseCommandLine(COMMAND, {
        args: rest,
        strict: true,
        allowPositionals: true,
        options: {
            keys: { type: 'string' },
            help: { type: 'boolean', short: 'h' },
        },
    });
    if (values.help) {
        io.stdout.write(USAGE);
        return EXIT.ok;
    }
    let keys;
    let text;
    try {
        const file = positionals[0];
        if (file === undefined)
            throw new UsageError('the evidence FILE is required (or - for stdin)');
        if (positionals.length > 1)
            throw new UsageError('give one evidence FILE');
        keys = await readKeys(values.keys);
        try {
            text = file === '-' ? await readStdin(io.stdin) : await readFile(file, 'utf8');
        }
        catch (error) {
            throw new UsageError(`cannot read the evidence file ${file} (${systemReason(error)})`);
        }
    }
    catch (error) {
        usageExit(COMMAND, error.message);
    }
    // verifyEvidence checks every record's shape itself: a line that is not a record is `malformed` at its index
    const result = await verifyEvidence(parseJsonLines(text), { keys });
    io.stdout.write(`${JSON.stringify(result)}\n`);
    return result.ok ? EXIT.ok : EXIT.failure;
}
