/**
 * Runs `agent-pep <args>` in this process, as the bin's process does (src/cli/main.ts): the command
 * from src/cli/dispatch.ts with stdin, stdout, stderr and the environment of its own, a `CliExit`'s
 * lines written to stderr and its code the exit code. The bin itself is run by ./bin.ts.
 */
import { PassThrough, Readable } from 'node:stream';
import { runCli } from '../../src/cli/dispatch.js';
import type { CliIo, CliOutput } from '../../src/cli/io.js';
import { CliExit } from '../../src/cli/usage.js';
import type { BinResult } from './bin.js';

/** A stdin a host writes at once but closes only `endAfterMs` later. */
export interface LateEnd {
  text: string;
  endAfterMs: number;
}

export interface CliOptions {
  /** Added to a copy of this process's environment (PDP_API_KEY cleared), as ./bin.ts does. */
  env?: Record<string, string>;
  /** stdin: ended after this text; a {@link LateEnd}; or `'open'`, never ended. Empty by default. */
  input?: string | Buffer | LateEnd | 'open';
}

function buffer(): CliOutput & { text(): string } {
  let text = '';
  return {
    write(chunk, callback) {
      text += chunk;
      if (callback) setImmediate(() => callback(null));
      return true;
    },
    text: () => text,
  };
}

function stdinOf(input: CliOptions['input']): NodeJS.ReadableStream {
  if (input === 'open') return new PassThrough();
  if (typeof input === 'object' && !Buffer.isBuffer(input)) {
    const stream = new PassThrough();
    stream.write(input.text);
    setTimeout(() => stream.end(), input.endAfterMs).unref();
    return stream;
  }
  return Readable.from(input === undefined || input.length === 0 ? [] : [Buffer.from(input)]);
}

/** Runs `agent-pep <args>` in this process; resolves with its exit code and what it wrote. */
export async function runInProcess(args: string[], opts: CliOptions = {}): Promise<BinResult> {
  const stdout = buffer();
  const stderr = buffer();
  const io: CliIo = {
    stdin: stdinOf(opts.input),
    stdout,
    stderr,
    env: { ...process.env, PDP_API_KEY: '', ...opts.env },
  };
  let code: number;
  try {
    code = await runCli(args, io);
  } catch (error) {
    if (!(error instanceof CliExit)) throw error;
    stderr.write(error.stderr);
    code = error.code;
  }
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}
