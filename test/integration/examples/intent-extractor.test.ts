/**
 * The intent-extractor example (`npm run example:intent-extractor`): the compiled
 * examples/intent-extractor/agent.ts, run in the worker as `node` runs it; a scripted LLM extractor's
 * grants sent through `checkInput(text, { intent })` let the payment the user asked for through after
 * untrusted content and hold the one an e-mail asked for; a question grants nothing.
 */
import { expect, it } from 'vitest';
import { runExample } from '../../support/examples.js';

it("a grant from the user's turn lets only the asked-for payment through; a question grants nothing", async () => {
  const { code, stdout } = await runExample('examples/intent-extractor/agent.js');
  expect(code).toBe(0);
  expect(stdout.trim().split('\n')).toEqual([
    'USER     "Please pay my rent, 950 EUR, to DE89 3704 0044 0532 0130 00." -> ALLOW, grants ["pay-rent"]',
    "PAY 4900 to the e-mail's IBAN: ESCALATE",
    'PAY 950 to the user\'s IBAN: ALLOW, inside ["pay-rent"]',
    'USER     "How much did I pay for rent last month?" -> ALLOW, grants []',
    "PAY 4900 to the e-mail's IBAN: ESCALATE",
    "PAY 950 to the user's IBAN: ESCALATE, inside []",
  ]);
});
