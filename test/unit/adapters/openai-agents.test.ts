/**
 * agent-pep/openai-agents without a PDP: what is refused when the adapter is made, and what its
 * pieces are (CONTRACT.md sections 2 and 8). No test here reaches the network.
 */
import { RunContext, tool, webSearchTool } from '@openai/agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  guardTools,
  pepInputGuardrail,
  pepModelInputFilter,
  pepOutputGuardrail,
  pepToolContext,
} from '../../../src/adapters/openai-agents.js';
import { createPep } from '../../../src/index.js';
import { optionOf } from '../../support/options.js';

// No test here asks the PDP (nothing listens on port 9).
const pep = createPep({ pdpUrl: 'http://127.0.0.1:9', agentId: 'a', session: 's', permits: false, retries: 0 });

const echo = tool({
  name: 'echo',
  description: 'Echo',
  parameters: z.object({ text: z.string() }),
  execute: async ({ text }) => text,
});

describe('guardTools refuses what it cannot guard, when it is made', () => {
  it('an unknown option is a TypeError naming it', () => {
    expect(optionOf(() => guardTools(pep, [echo], { chekResult: true } as never))).toBe('chekResult');
  });

  it('checkResult must be a boolean', () => {
    expect(optionOf(() => guardTools(pep, [echo], { checkResult: 'yes' } as never))).toBe('checkResult');
  });

  it('tools must be an array of function tools (a hosted tool cannot be guarded)', () => {
    expect(() => guardTools(pep, echo as never)).toThrow(TypeError);
    expect(() => guardTools(pep, [webSearchTool()] as never)).toThrow(/tools\[0\] is not a function tool/);
  });

  it('a client without permits configured is refused, as by pep.guardTool', () => {
    const bare = createPep({ pdpUrl: 'http://127.0.0.1:9', agentId: 'a', session: 's' });
    expect(() => guardTools(bare, [echo])).toThrow(TypeError);
  });
});

describe('guardTools returns new tools and leaves the originals alone', () => {
  it('the wrapped tool keeps name, description and schema; the original invoke is untouched', () => {
    const originalInvoke = echo.invoke;
    const [wrapped] = guardTools(pep, [echo]);
    expect(wrapped).not.toBe(echo);
    expect(echo.invoke).toBe(originalInvoke);
    expect(wrapped).toMatchObject({ type: 'function', name: 'echo', description: 'Echo', parameters: echo.parameters });
  });

  it("a tool's own needsApproval: true still asks for approval (no PDP needed to say so)", async () => {
    const manual = tool({
      name: 'manual',
      description: 'Manual',
      parameters: z.object({}),
      needsApproval: true,
      execute: async () => 'x',
    });
    const [wrapped] = guardTools(pep, [manual]);
    await expect(wrapped.needsApproval(new RunContext(), {}, 'c1')).resolves.toBe(true);
  });
});

describe('pepToolContext', () => {
  it('is undefined outside a guarded call', () => {
    expect(pepToolContext(undefined)).toBeUndefined();
    expect(pepToolContext({})).toBeUndefined();
    expect(pepToolContext('details')).toBeUndefined();
  });
});

describe('the guardrails and the filter', () => {
  it('the input guardrail blocks the model call (runInParallel: false)', () => {
    expect(pepInputGuardrail(pep)).toMatchObject({ name: 'agent-pep input', runInParallel: false });
  });

  it('the output guardrail is named', () => {
    expect(pepOutputGuardrail(pep).name).toBe('agent-pep output');
  });

  it('the filter leaves input without tool outputs as it is, with no PDP call', async () => {
    const filter = pepModelInputFilter(pep);
    const modelData = { instructions: 'Help.', input: [{ role: 'user' as const, content: 'Hello' }] };
    await expect(filter({ modelData, agent: undefined as never, context: undefined })).resolves.toEqual(modelData);
  });
});
