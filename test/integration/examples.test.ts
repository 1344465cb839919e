/** The dispatcher example runs with one command and enforces (needs dist/; `npm test` builds first). */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

it('examples/dispatcher.js runs the allowed tool call and refuses the others', () => {
  const out = execFileSync(process.execPath, ['examples/dispatcher.js'], { cwd: root, encoding: 'utf8' });
  expect(out).toContain('{"orderId":"ord_1842","status":"shipped"}');
  expect(out).toContain("ERROR: Tool 'refund_payment' is held for human review");
  expect(out).toContain("ERROR: Tool 'bank_transfer_funds' denied by policy");
  expect(out).toContain('side effects that ran: 1 (refund_payment)');
});
