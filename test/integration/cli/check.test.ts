/**
 * `agent-pep check` (CONTRACT.md section 11) against the dev PDP: the decision as JSON (the permit only
 * with --show-permit), exit 0 ALLOW or WARN, 3 BLOCK, 4 ESCALATE, 2 for a usage error; the API key only
 * from the environment. The command runs in this process (test/support/cli.ts); the last block runs
 * the built bin, for what only its process shows: the exit codes and stdin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDevPdp } from '../../../packages/dev-pdp/src/index.js';
import { expectUsage, runBin } from '../../support/bin.js';
import { runInProcess } from '../../support/cli.js';
import { closedPort } from '../../support/fake-pdp.js';
import { PHONE_REDACTION, REFUND_REVIEW } from '../../support/policies.js';

const POLICY = {
  agents: ['support-ai'],
  latches: [
    REFUND_REVIEW,
    PHONE_REDACTION,
    { id: 'no-wire', stage: 'action', tool: 'wire_*', verdict: 'BLOCK', reason: 'wires are not allowed' },
    { id: 'no-secrets', stage: 'context_egress', tool: 'read_vault', verdict: 'BLOCK', reason: 'vault output' },
  ],
};
const KEY = 'k-check-test';

let pdp: Awaited<ReturnType<typeof startDevPdp>>;
let keyed: Awaited<ReturnType<typeof startDevPdp>>;

beforeAll(async () => {
  pdp = await startDevPdp({ policy: POLICY, port: 0, log: false });
  keyed = await startDevPdp({ policy: POLICY, port: 0, log: false, apiKey: KEY });
});
afterAll(async () => {
  await pdp.close();
  await keyed.close();
});

const base = (): string[] => ['check', '--pdp', pdp.url, '--agent', 'support-ai'];

function json(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe('agent-pep check: exit codes by verdict', () => {
  it('exits 0 on an action ALLOW and prints the decision without its permit', async () => {
    const r = await runInProcess([...base(), '--tool', 'lookup_order', '--args', '{"orderId":"ord_1"}']);
    expect(r.code).toBe(0);
    const d = json(r.stdout);
    expect(d).toMatchObject({ verdict: 'ALLOW', stage: 'action' });
    expect(typeof d.requestId).toBe('string');
    expect(typeof d.decisionId).toBe('string');
    expect(d).not.toHaveProperty('permitId');
    expect(r.stdout).not.toMatch(/eyJ[\w-]+\.[\w-]+\.[\w-]+/);
  });

  it('prints the permit only with --show-permit', async () => {
    const r = await runInProcess([...base(), '--tool', 'lookup_order', '--args', '{}', '--show-permit']);
    expect(r.code).toBe(0);
    expect(json(r.stdout).permitId).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('exits 0 on a text WARN and prints the transformed content', async () => {
    const r = await runInProcess([...base(), '--stage', 'output', '--text', 'call 555-123-4567']);
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toMatchObject({
      verdict: 'WARN',
      transformedContent: 'call [phone]',
      latches: ['phone-redaction'],
    });
  });

  it('exits 3 on a PDP BLOCK', async () => {
    const r = await runInProcess([...base(), '--tool', 'wire_funds', '--args', '{"amount":1}']);
    expect(r.code).toBe(3);
    expect(json(r.stdout)).toMatchObject({ verdict: 'BLOCK', reason: 'wires are not allowed' });
    expect(json(r.stdout)).not.toHaveProperty('synthesized');
  });

  it('exits 3 on a synthesized BLOCK: a PDP that is down never gives 0', async () => {
    const r = await runInProcess([
      'check',
      '--pdp',
      await closedPort(),
      '--agent',
      'a',
      '--stage',
      'input',
      '--text',
      'hi',
    ]);
    expect(r.code).toBe(3);
    expect(json(r.stdout)).toMatchObject({ verdict: 'BLOCK', synthesized: { code: 'pdp_unreachable' } });
  });

  it('exits 4 on ESCALATE, with the escalation id', async () => {
    const r = await runInProcess([...base(), '--tool', 'refund_payment', '--args', '{"amount":900}']);
    expect(r.code).toBe(4);
    expect(json(r.stdout)).toMatchObject({ verdict: 'ESCALATE', latches: ['refund-review'] });
    expect(typeof json(r.stdout).escalationId).toBe('string');
  });

  it('checks context_egress with the tool whose result the text is, and reads --text - from stdin', async () => {
    const r = await runInProcess([...base(), '--stage', 'context_egress', '--tool', 'read_vault', '--text', '-'], {
      input: 'secret stuff',
    });
    expect(r.code).toBe(3);
    expect(json(r.stdout)).toMatchObject({ verdict: 'BLOCK', stage: 'context_egress', latches: ['no-secrets'] });
    const input = await runInProcess([...base(), '--stage', 'input', '--text', '-'], { input: 'hello' });
    expect(json(input.stdout)).toMatchObject({ verdict: 'ALLOW', stage: 'input' });
  });

  it('sends a simulated request with --simulated (no permit is minted)', async () => {
    const r = await runInProcess([...base(), '--tool', 'lookup_order', '--args', '{}', '--simulated', '--show-permit']);
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toMatchObject({ verdict: 'ALLOW', simulated: true });
    expect(json(r.stdout)).not.toHaveProperty('permitId');
  });
});

describe('agent-pep check: the API key comes from the environment only', () => {
  it('reads the key from --api-key-env VAR; without it the PDP answers 401 and check exits 3', async () => {
    const args = ['check', '--pdp', keyed.url, '--agent', 'support-ai', '--stage', 'input', '--text', 'hi'];
    const without = await runInProcess(args);
    expect(without.code).toBe(3);
    expect(json(without.stdout)).toMatchObject({ synthesized: { code: 'pdp_status', status: 401 } });
    const withKey = await runInProcess([...args, '--api-key-env', 'MY_PDP_KEY'], { env: { MY_PDP_KEY: KEY } });
    expect(withKey.code).toBe(0);
    expect(withKey.stdout + withKey.stderr).not.toContain(KEY);
  });

  it('is a usage error when the variable is not set, and there is no flag that takes the key itself', async () => {
    const r = await runInProcess([
      ...base(),
      '--stage',
      'input',
      '--text',
      'hi',
      '--api-key-env',
      'UNSET_VAR_FOR_TEST',
    ]);
    expectUsage(r, 'check', /UNSET_VAR_FOR_TEST is not set/);
    // The line says what to do: set the variable, or drop the flag for a PDP without a key.
    expect(r.stderr).toContain("set it to the PDP's API key, or leave --api-key-env out for a PDP that needs none");
    const flag = await runInProcess([...base(), '--stage', 'input', '--text', 'hi', '--api-key', KEY]);
    expectUsage(flag, 'check', /--api-key/);
    expect(flag.stderr).not.toContain(KEY);
  });
});

describe('agent-pep check --protocol', () => {
  it('--protocol authzen asks the PDP over AuthZEN 1.0: an ALLOW with a permit, a BLOCK with exit 3', async () => {
    const allow = await runInProcess([...base(), '--protocol', 'authzen', '--tool', 'lookup_order', '--args', '{}']);
    expect(allow.code).toBe(0);
    expect(json(allow.stdout)).toMatchObject({ verdict: 'ALLOW', stage: 'action' });
    const evidence = pdp.evidence();
    expect(evidence[evidence.length - 1]).toMatchObject({ tool: 'lookup_order', verdict: 'ALLOW' });
    const block = await runInProcess([...base(), '--protocol', 'authzen', '--tool', 'wire_money', '--args', '{}']);
    expect(block.code).toBe(3);
    expect(json(block.stdout).verdict).toBe('BLOCK');
  });

  it('refuses a protocol it does not know', async () => {
    const r = await runInProcess([...base(), '--protocol', 'grpc', '--tool', 'x', '--args', '{}']);
    expectUsage(r, 'check', /--protocol must be agent-pep or authzen/);
  });
});

describe('agent-pep check: usage errors exit 2 with one line and a pointer to --help', () => {
  it('names a missing --pdp, a missing step, --args that are not JSON (with the position) or not an object', async () => {
    expectUsage(
      await runInProcess(['check', '--agent', 'a', '--stage', 'input', '--text', 'x']),
      'check',
      /--pdp URL is required/,
    );
    expectUsage(await runInProcess([...base()]), 'check', /--stage STAGE --text T, or --tool NAME --args JSON/);
    expectUsage(
      await runInProcess([...base(), '--tool', 't', '--args', '{"a" 1}']),
      'check',
      /--args is not valid JSON at line 1, column 6 \(position 5\)/,
    );
    expectUsage(
      await runInProcess([...base(), '--tool', 't', '--args', '{"a":']),
      'check',
      /--args is not valid JSON at line 1, column 6 \(position 5\)/,
    );
    expectUsage(
      await runInProcess([...base(), '--tool', 't', '--args', '[1]']),
      'check',
      /--args must be a JSON object/,
    );
    expectUsage(await runInProcess([...base(), '--tool', 't']), 'check', /--tool needs --args/);
  });

  it('names a bad stage, a flag it does not know, and a bad --pdp URL', async () => {
    expectUsage(await runInProcess([...base(), '--stage', 'action', '--text', 'x']), 'check', /--stage must be/);
    expectUsage(await runInProcess([...base(), '--stage', 'input', '--text', 'x', '--bogus']), 'check', /bogus/);
    expectUsage(
      await runInProcess(['check', '--pdp', 'ftp://x', '--agent', 'a', '--stage', 'input', '--text', 'x']),
      'check',
      /pdpUrl/,
    );
    // A URL without its scheme (a common slip): the line names the flag and shows the form it takes.
    const bare = await runInProcess([
      'check',
      '--pdp',
      '127.0.0.1:8787',
      '--agent',
      'a',
      '--stage',
      'input',
      '--text',
      'x',
    ]);
    expectUsage(bare, 'check', /^agent-pep: --pdp: .*not a valid URL/);
    expect(bare.stderr).toContain("(the PDP's base URL, as http://127.0.0.1:8787)");
    expectUsage(
      await runInProcess([...base(), '--stage', 'input', '--text', 'x', '--tool', 't']),
      'check',
      /only for context_egress/,
    );
  });

  it('prints its help with --help and exits 0', async () => {
    const r = await runInProcess(['check', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Usage: agent-pep check/);
    expect(r.stdout).toContain('--show-permit');
  });
});

describe('agent-pep check: the bin', () => {
  it('exits 3 on BLOCK (the text read from a piped stdin) and 4 on ESCALATE, the decision on stdout', async () => {
    const [block, escalate] = await Promise.all([
      runBin([...base(), '--stage', 'context_egress', '--tool', 'read_vault', '--text', '-'], {
        input: 'secret stuff',
      }),
      runBin([...base(), '--tool', 'refund_payment', '--args', '{"amount":900}']),
    ]);
    expect([block.code, json(block.stdout)]).toMatchObject([3, { verdict: 'BLOCK', latches: ['no-secrets'] }]);
    expect([escalate.code, json(escalate.stdout)]).toMatchObject([4, { verdict: 'ESCALATE' }]);
  });
});
