/**
 * What every command shares (src/cli/usage.ts; CONTRACT.md section 11): a usage error is one line
 * naming it, then one line pointing to `--help`, exit 2 (a thrown CliExit, which the bin writes and exits
 * with); the system's reason and the JSON position.
 */
import { describe, expect, it } from 'vitest';
import {
  CliExit,
  EXIT,
  exitWith,
  integerFlag,
  jsonPosition,
  parseCommandLine,
  systemReason,
  UsageError,
  usageExit,
} from '../../../src/cli/usage.js';

/** Runs `f`, which must end the command: the exit code and the stderr lines of the CliExit it throws. */
function captured(f: () => void): { code: number; stderr: string } {
  try {
    f();
  } catch (e) {
    if (e instanceof CliExit) return { code: e.code, stderr: e.stderr };
    throw e;
  }
  throw new Error('expected an exit');
}

describe('usageExit', () => {
  it('exits 2 with exactly two lines: the problem, then the pointer to the command’s --help', () => {
    const { code, stderr } = captured(() => usageExit('dev-pdp', '--policy FILE is required'));
    expect(code).toBe(EXIT.usage);
    expect(stderr).toBe("agent-pep: --policy FILE is required\nRun 'agent-pep dev-pdp --help' for usage.\n");
  });

  it('keeps only the first line of a multi-line message; the bin itself points to agent-pep --help', () => {
    const { stderr } = captured(() => usageExit('', 'first\nsecond'));
    expect(stderr.split('\n')).toEqual(['agent-pep: first', "Run 'agent-pep --help' for usage.", '']);
  });
});

describe('exitWith', () => {
  it('writes one line and exits with the code', () => {
    expect(captured(() => exitWith('boom', EXIT.failure))).toEqual({ code: 1, stderr: 'agent-pep: boom\n' });
  });
});

describe('systemReason and jsonPosition', () => {
  it('systemReason gives the system code (ENOENT), else "unreadable" (never a message)', () => {
    expect(systemReason(Object.assign(new Error('no such file /secret/path'), { code: 'ENOENT' }))).toBe('ENOENT');
    expect(systemReason(new Error('x'))).toBe('unreadable');
    expect(systemReason({ code: 'not a code; rm -rf' })).toBe('unreadable');
    expect(systemReason(null)).toBe('unreadable');
  });

  it('jsonPosition names where the text stops being JSON, and when it ends early; never a piece of the text', () => {
    expect(jsonPosition('{ agents')).toBe(' at line 1, column 3 (position 2)');
    // JSON.parse names no position for these on Node 20 (and quotes the text for the first)
    expect(jsonPosition('{"a":,}')).toBe(' at line 1, column 6 (position 5)');
    expect(jsonPosition('{"agents":\n')).toBe(' at line 2, column 1 (position 11) (it ends early)');
    expect(jsonPosition('{"a":"sk_live_secret",}')).toBe(' at line 1, column 23 (position 22)');
    // JSON errors give line and column: a policy file's third line
    expect(jsonPosition('{\n  "agents": ["a"],\n  "latches": [,]\n}')).toBe(' at line 3, column 15 (position 35)');
    expect(jsonPosition('{\r\n "a": 1\r\n x')).toBe(' at line 3, column 2 (position 13)');
  });
});

describe('integerFlag and parseCommandLine', () => {
  it('integerFlag: undefined stays undefined; an integer in range is a number; anything else a UsageError', () => {
    expect(integerFlag(undefined, 'port', 0, 65535)).toBeUndefined();
    expect(integerFlag('8787', 'port', 0, 65535)).toBe(8787);
    for (const bad of ['-1', '65536', '1.5', 'abc', '', ' 1']) {
      expect(() => integerFlag(bad, 'port', 0, 65535), bad).toThrow(UsageError);
    }
  });

  it('parseCommandLine: an unknown flag is a usage exit (2) naming it', () => {
    const { code, stderr } = captured(() =>
      parseCommandLine('dev-pdp', { args: ['--nope'], options: { policy: { type: 'string' } }, strict: true }),
    );
    expect(code).toBe(2);
    expect(stderr.split('\n')[0]).toContain('--nope');
  });

  it('parseCommandLine: good arguments parse', () => {
    const { values } = parseCommandLine('dev-pdp', {
      args: ['--policy', 'p.json'],
      options: { policy: { type: 'string' } },
      strict: true,
    });
    expect(values.policy).toBe('p.json');
  });
});
