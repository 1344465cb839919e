/**
 * examples/otel/main.ts, the README's "Telemetry", compiled and run as a process: it prints one
 * `agent_pep.decision` span per decision through the OpenTelemetry SDK's console exporter, with every
 * verdict, the synthesized BLOCK as ERROR, and the three metrics.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { built, runNode } from '../../support/processes.js';

let out: { code: number; stdout: string; stderr: string };

beforeAll(async () => {
  out = await runNode(built('examples/otel/main.js'));
}, 60_000);

describe('examples/otel/main.ts', () => {
  it('runs offline to its end and says which decisions it made', () => {
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('decisions: ALLOW, ALLOW, ALLOW, ESCALATE, BLOCK, WARN, BLOCK (pdp_status)');
  });

  it('prints one agent_pep.decision span per decision, with every verdict', () => {
    expect(out.stdout.match(/name: 'agent_pep\.decision'/g)).toHaveLength(7);
    for (const verdict of ['ALLOW', 'WARN', 'BLOCK', 'ESCALATE']) {
      expect(out.stdout).toContain(`'pep.verdict': '${verdict}'`);
    }
    expect(out.stdout).toContain("'gen_ai.tool.name': 'bank_transfer_funds'");
    expect(out.stdout).toContain("'pep.fail_closed_code': 'pdp_status'");
    // the synthesized BLOCK is the only ERROR (SpanStatusCode.ERROR is 2)
    expect(out.stdout.match(/status: \{ code: 2/g)).toHaveLength(1);
  });

  it('prints the three metrics it recorded', () => {
    expect(out.stdout).toContain("name: 'pep.decisions'");
    expect(out.stdout).toContain("name: 'pep.permit.verifications'");
    expect(out.stdout).toContain("'pep.permit.result': 'ok'");
    expect(out.stdout).toContain("name: 'pep.decision.duration'");
    expect(out.stdout).toContain("unit: 's'");
  });

  it('prints no content and no args', () => {
    for (const secret of ['555-123-4567', 'Where is my order', 'acct_1', 'Your refund']) {
      expect(out.stdout).not.toContain(secret);
    }
  });
});
