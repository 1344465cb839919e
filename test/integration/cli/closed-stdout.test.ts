/**
 * The bin when whoever reads its stdout has gone away (EPIPE): the output is lost, never the exit code
 * (CONTRACT.md section 11: `check` exits 3 on BLOCK and 4 on ESCALATE; the hook fails closed, a deny
 * and exit 2, on its own errors, and an answer it could not write is one). Real processes: only a real
 * pipe closes.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type DevPdp, startDevPdp } from '../../../packages/dev-pdp/src/index.js';
import { BIN } from '../../support/bin.js';

let pdp: DevPdp;
beforeAll(async () => {
  pdp = await startDevPdp({
    policy: {
      agents: ['a'],
      latches: [
        { id: 'no-del', stage: 'action', tool: 'delete_*', verdict: 'BLOCK', reason: 'no deletes' },
        { id: 'rev', stage: 'action', tool: 'pay', verdict: 'ESCALATE', reason: 'review' },
      ],
    },
    log: false,
  });
});
afterAll(() => pdp.close());

/** Runs the bin with its stdout closed by the reader at once: the exit code and stderr. */
function withClosedStdout(args: string[], input = ''): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdin.end(input);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

const check = (tool: string) => ['check', '--pdp', pdp.url, '--agent', 'a', '--tool', tool, '--args', '{}'];

it('check: a BLOCK still exits 3 and an ESCALATE 4, without a crash', async () => {
  const blocked = await withClosedStdout(check('delete_x'));
  expect(blocked.code).toBe(3);
  expect(blocked.stderr).not.toMatch(/Unhandled 'error' event|EPIPE/);
  expect((await withClosedStdout(check('pay'))).code).toBe(4);
});

it('hook: an answer it could not write is its own error: exit 2, never 0', async () => {
  const event = JSON.stringify({
    session_id: 's1',
    hook_event_name: 'PreToolUse',
    tool_name: 'delete_x',
    tool_input: {},
  });
  const r = await withClosedStdout(['hook', 'claude-code', '--pdp', pdp.url, '--agent', 'a'], event);
  expect(r.code).toBe(2);
  // an allow that cannot be written is no allow either
  const allowed = JSON.stringify({
    session_id: 's1',
    hook_event_name: 'PreToolUse',
    tool_name: 'read_x',
    tool_input: {},
  });
  expect((await withClosedStdout(['hook', 'claude-code', '--pdp', pdp.url, '--agent', 'a'], allowed)).code).toBe(2);
});
