/**
 * What every command of the `agent-pep` bin shares: argument parsing with one-line usage errors
 * (docs/cli.md), the system's reason for a failed read, and the exit (a thrown {@link CliExit}).
 * @internal
 */
import { parseArgs } from 'node:util';
import { jsonWhere } from '../internal/json-position.js';
/** Exit codes shared by every command. */
export const EXIT = Object.freeze({ ok: 0, failure: 1, usage: 2 });
/** A bad command line: printed as one line, then a pointer to `--help`, exit 2. */
export class UsageError extends Error {
    name = 'UsageError';
}
/**
 * A command's end with an exit code and lines for stderr: thrown by {@link exitWith} and
 * {@link usageExit}; the bin writes `stderr` and exits with `code` (src/cli/main.ts), a test reads both.
 */
export class CliExit extends Error {
    code;
    stderr;
    name = 'CliExit';
    constructor(
    /** The process exit code. */
    code, 
    /** What goes to stderr, every line ending in a newline. */
    stderr) {
        super(`exit ${code}`);
        this.code = code;
        this.stderr = stderr;
    }
}
/** Ends the command with `agent-pep: <message>` on stderr and exit code `code`. */
export function exitWith(message, code) {
    throw new CliExit(code, `agent-pep: ${message}\n`);
}
/**
 * Ends the command with exit code 2 and one line naming the problem, then one line pointing to `--help`
 * (never the whole usage).
 * @param command - the command's words, e.g. `'dev-pdp'` or `'evidence verify'`; `''` for the bin itself
 */
export function usageExit(command, message) {
    const help = command === '' ? 'agent-pep --help' : `agent-pep ${command} --help`;
    throw new CliExit(EXIT.usage, `agent-pep: ${message.split('\n')[0]}\nRun '${help}' for usage.\n`);
}
/** The system's reason for a failed file operation (`ENOENT`, `EACCES`, ...), or a short fallback. */
export function systemReason(error) {
    const code = error?.code;
    return typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,31}$/.test(code) ? code : 'unreadable';
}
/**
 * Where `text`, which `JSON.parse` refused, stops being JSON: `' at line L, column C (position N)'`,
 * with `' (it ends early)'` when cut short, or `''` (src/internal/json-position.ts).
 */
export function jsonPosition(text) {
    return jsonWhere(text);
}
/**
 * Parses a command line strictly (`node:util` `parseArgs`); a bad flag or value is a usage exit naming it.
 * @param command - the command's words, for the `--help` pointer
 * @param config - `parseArgs` config, with `args`
 */
export function parseCommandLine(command, config) {
    try {
        return parseArgs(config);
    }
    catch (error) {
        usageExit(command, error instanceof Error ? error.message : 'bad arguments');
    }
}
/** An integer flag in `[min, max]`, or a {@link UsageError}. */
export function integerFlag(value, name, min, max) {
    if (value === undefined)
        return undefined;
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
        throw new UsageError(`--${name} must be an integer from ${min} to ${max}`);
    }
    return Number(value);
}
