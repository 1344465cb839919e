/**
 * Defect probe: when args cannot be snapshotted, client.ts builds the synthesized message from the
 * message of whatever the args threw (`args are not a plain object of JSON values: ${err.message}`).
 * A getter / Proxy trap whose error message quotes the value (common: validation or parse errors)
 * puts args data into `synthesized.message`, `reason`, the onDecision event and the error's toolMessage.
 * Contract section 2: synthesized.message "Never contains content, args, a permit or an API key";
 * section 5: "No error message, log line or event ever contains ... args".
 */
import { describe, expect, it } from 'vitest';
import { createPep, type DecisionEvent } from '../../../src/index.js';

const SECRET = '4111-1111-1111-1111';

describe('invalid_request message built from a thrown error', () => {
  it('does not copy the thrown message (which may quote args) into the decision or the event', async () => {
    const events: DecisionEvent[] = [];
    const pep = createPep({
      pdpUrl: 'http://127.0.0.1:9', // never contacted
      agentId: 'support-ai',
      session: 's1',
      onDecision: (e) => events.push(e),
    });
    const args = {
      get card(): string {
        throw new SyntaxError(`Unexpected token in "${SECRET}"`);
      },
    };
    const d = await pep.authorizeAction('charge_card', args);
    await pep.close();
    expect(d.verdict).toBe('BLOCK');
    expect(d.synthesized?.code).toBe('invalid_request');
    expect(JSON.stringify(d)).not.toContain(SECRET);
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });
});
