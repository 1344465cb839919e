#!/usr/bin/env node
/**
 * agent-pep demo: guards real agent traffic offline. Starts the dev PDP (examples/policy.json) and a
 * side-effecting tool service on 127.0.0.1, replays demo/agent-traffic.jsonl through the five
 * stages, then shows fail-closed behaviour on the same traffic.
 *
 *   npm run demo                      table, summary and fail-closed checks
 *   npm run demo -- --quiet           summary only
 *   npm run demo -- --json            the result as JSON on stdout
 *   npm run demo -- --corpus FILE     replay another file of the same format
 *
 * Exit code: 0 when every fail-closed check held, 1 when one failed, 2 for bad usage or corpus.
 * Policy misses (an attack let through, a benign case stopped) do not change the exit code.
 */
import { CorpusError } from './corpus.js';
import { runDemo } from './replay.js';
import { summaryText, tableHeader, tableRow } from './report.js';

const USAGE = `usage: node demo/main.js [--json] [--quiet] [--corpus FILE]

  --json          write { cases, summary, failClosed } as JSON to stdout (nothing else)
  --quiet         print the summary only
  --corpus FILE   replay FILE (JSON Lines, the format of demo/agent-traffic.jsonl)
  --help          show this help`;

/**
 * @param {string[]} argv
 * @returns {{ json: boolean, quiet: boolean, corpus?: string, help: boolean } | { error: string }}
 */
function parseArgs(argv) {
  /** @type {{ json: boolean, quiet: boolean, corpus?: string, help: boolean }} */
  const opts = { json: false, quiet: false, help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = /** @type {string} */ (argv[i]);
    if (arg === '--json') opts.json = true;
    else if (arg === '--quiet') opts.quiet = true;
    else if (arg === '--help' || arg === '-h') opts.help = true;
    else if (arg === '--corpus' || arg.startsWith('--corpus=')) {
      const value = arg === '--corpus' ? argv[++i] : arg.slice('--corpus='.length);
      if (!value) return { error: '--corpus needs a file' };
      opts.corpus = value;
    } else return { error: `unknown argument: ${arg}` };
  }
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  if ('error' in opts) {
    process.stderr.write(`${opts.error}\n${USAGE}\n`);
    return 2;
  }
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const progress = process.stderr.isTTY === true;
  /** @type {string[]} */
  const table = [];
  let result;
  try {
    result = await runDemo({
      ...(opts.corpus !== undefined ? { corpusPath: opts.corpus } : {}),
      json: opts.json,
      quiet: opts.quiet,
      onMalformed: (line, reason) => process.stderr.write(`corpus line ${line} skipped: ${reason}\n`),
      onCase: (done, total, row) => {
        if (!opts.json && !opts.quiet) table.push(tableRow(row));
        if (progress) process.stderr.write(`\r\x1b[K[${done}/${total}] ${row.stage} ${row.id}`);
        if (progress && done === total) process.stderr.write('\r\x1b[Kfail-closed checks...');
      },
    });
  } catch (error) {
    if (progress) process.stderr.write('\r\x1b[K');
    if (error instanceof CorpusError) {
      process.stderr.write(`demo: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  if (progress) process.stderr.write('\r\x1b[K');
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } else {
    if (!opts.quiet) process.stdout.write(`${tableHeader()}\n${table.join('\n')}\n\n`);
    process.stdout.write(`${summaryText(result)}\n`);
  }
  return result.failClosed.every((c) => c.passed) ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  },
);
